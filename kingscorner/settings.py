"""Django settings, read from the environment; the defaults run on one machine with no other services."""

from datetime import date, timedelta
from pathlib import Path

import django_stubs_ext
import environ
from celery.schedules import crontab
from corsheaders.defaults import default_headers

from kingscorner.database import connection_options

# Django's generic classes (ModelAdmin[...]) subscriptable at run time, as the type checker sees them.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

DEBUG = env.bool("DEBUG", default=False)
# The default is for local runs only; `check --deploy` flags any key that starts with "django-insecure-".
SECRET_KEY = env.str("SECRET_KEY", default="django-insecure-local-development-key-never-use-in-production")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "games",
    "daily",
    # The reference web client (/play/): page shells and their static files, talking to the API over HTTP.
    "web",
]

# Django's deploy checks look for its own middleware by dotted path; kingscorner.middleware's subclasses of
# SecurityMiddleware, XFrameOptionsMiddleware and CsrfViewMiddleware (which run them as coroutines under ASGI)
# are those middleware, so the three checks that only look for the path are silenced.
SILENCED_SYSTEM_CHECKS = ["security.W001", "security.W002", "security.W003"]

MIDDLEWARE = [
    # Every answer, refusals included, names the contract it keeps (API-Version).
    "kingscorner.middleware.ApiVersionMiddleware",
    # First, so that every answer to a browser on another origin carries the CORS headers, refusals included.
    "corsheaders.middleware.CorsMiddleware",
    "kingscorner.middleware.SecurityMiddleware",
    "kingscorner.middleware.StaticFilesMiddleware",
    "kingscorner.middleware.SessionMiddleware",
    "kingscorner.middleware.CommonMiddleware",
    "kingscorner.middleware.CsrfViewMiddleware",
    "kingscorner.middleware.AuthenticationMiddleware",
    "kingscorner.middleware.MessageMiddleware",
    "kingscorner.middleware.XFrameOptionsMiddleware",
    # After those that add headers to every answer (its 413 and 411 carry the security headers too), before
    # anything that reads a body (django-axes reads the admin login's form).
    "kingscorner.middleware.BodySizeLimitMiddleware",
    # Last, as django-axes requires: it answers a locked-out admin login.
    "axes.middleware.AxesMiddleware",
]

# The admin's login: django-axes counts failed logins per user name and client address together, so that
# nobody can lock an operator out from elsewhere, and refuses that pair (even the right password) after
# ADMIN_LOGIN_FAILURE_LIMIT failures until ADMIN_LOGIN_COOLOFF_MINUTES pass or `manage.py axes_reset`. The
# API's bearer tokens never go through Django's authenticate(), so it counts nothing of the API's.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("ADMIN_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("ADMIN_LOGIN_COOLOFF_MINUTES", default=60))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# The address the rate limits count, behind NUM_PROXIES proxies as well.
AXES_CLIENT_IP_CALLABLE = "kingscorner.client_address.client_address"

# Web front ends on other origins call the API from browsers. Tokens travel in the Authorization header,
# never in cookies, so letting any origin read the API's answers exposes nothing a script could not fetch.
CORS_URLS_REGEX = r"^/api/.*$"
_cors_origins = env.list("CORS_ALLOWED_ORIGINS", default=["*"])
CORS_ALLOW_ALL_ORIGINS = "*" in _cors_origins
CORS_ALLOWED_ORIGINS = [] if CORS_ALLOW_ALL_ORIGINS else _cors_origins
# Last-Event-ID: a fetch() stream client resuming sends it (docs/tables-and-streams.md).
CORS_ALLOW_HEADERS = (*default_headers, "if-match", "idempotency-key", "last-event-id")
CORS_EXPOSE_HEADERS = ["ETag", "Location", "Retry-After", "Idempotent-Replayed", "API-Version", "Allow"]
CORS_PREFLIGHT_MAX_AGE = 86400

ROOT_URLCONF = "kingscorner.urls"
WSGI_APPLICATION = "kingscorner.wsgi.application"
ASGI_APPLICATION = "kingscorner.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
# A web worker keeps its connection between requests (no connect per request). It is not checked with a
# `SELECT 1` before each request unless CONN_HEALTH_CHECKS is set: a connection the server dropped fails the
# one request that finds it (a 503 `database_unavailable` with Retry-After), and Django closes it at that
# request's end, so the next one connects afresh.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = env.bool("CONN_HEALTH_CHECKS", default=False)
# psycopg's minimum connect timeout is 2 s.
DATABASE_CONNECT_TIMEOUT = max(2, env.int("DATABASE_CONNECT_TIMEOUT", default=3))
# Seconds; 0 turns the server's statement timeout and the client's deadline off (for a long migration).
DATABASE_STATEMENT_TIMEOUT = env.float("DATABASE_STATEMENT_TIMEOUT", default=5.0)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The embedded default serves several threads at once: writers queue for the lock from the start of
    # their transaction instead of failing with "database is locked" part-way through it.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"transaction_mode": "IMMEDIATE", "timeout": 20})
else:
    # A database that does not answer costs a request a bounded time, then a 503 `database_unavailable`,
    # rather than holding a worker for the operating system's TCP timeout (kingscorner/database.py): a
    # connection is given up after DATABASE_CONNECT_TIMEOUT seconds, a statement is cancelled by the server
    # after DATABASE_STATEMENT_TIMEOUT, a hung server is given up a second after that, and a peer that
    # vanished is found by TCP keepalives after DATABASE_KEEPALIVES_IDLE seconds of silence.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            **connection_options(
                connect_timeout=DATABASE_CONNECT_TIMEOUT,
                statement_timeout=DATABASE_STATEMENT_TIMEOUT,
                keepalives_idle=env.int("DATABASE_KEEPALIVES_IDLE", default=10),
            ),
            **DATABASES["default"].get("OPTIONS", {}),
        }
    )
    # The move path's read and write (games/persistence.py) are prepared statements on each connection.
    # Django turns psycopg's preparing off (`prepare_threshold` None) for the sake of connection poolers that
    # cannot hold them; set DATABASE_PREPARED_STATEMENTS=false behind such a pooler (PgBouncer before 1.21,
    # or without `max_prepared_statements`; docker-compose.yml's PgBouncer): psycopg then prepares nothing,
    # and the move path's statements are bound on the server unnamed, within their transaction. The ORM's own
    # queries are never prepared (bound on the client).
    if env.bool("DATABASE_PREPARED_STATEMENTS", default=True):
        DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", 5)
# Retry-After, in seconds, on a 503 `database_unavailable`.
DATABASE_RETRY_AFTER = env.int("DATABASE_RETRY_AFTER", default=5)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.str("REDIS_URL", default="")
# The cache holds only rate-limit counters: a Redis that is down or hung must cost a request a fraction of a
# second, not a 500 or a 30 s wait, so its calls time out quickly and the backend fails open.
REDIS_CACHE_OPTIONS = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "kingscorner.cache.FailOpenRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": REDIS_CACHE_OPTIONS,
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Serve static files (admin, Swagger UI) from the app folders too, so they work without `collectstatic`.
WHITENOISE_USE_FINDERS = True
# The guides (docs/), built into a static site by the install (setup.py, MkDocs) inside the package, so
# that an installed image and an editable checkout alike serve them: web_root/docs/ is served under /docs/,
# each page's folder at its index.html.
WHITENOISE_ROOT = Path(__file__).resolve().parent / "web_root"
WHITENOISE_INDEX_FILE = True

# Bodies above this size are refused with 413 before a view reads them.
MAX_BODY_BYTES = env.int("MAX_BODY_BYTES", default=64 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_BODY_BYTES

# Production hardening; every switch is off by default so that a local plain-HTTP run works.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=False)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=False)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
if env.bool("SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Load balancers and container health checks probe over plain HTTP inside the network.
SECURE_REDIRECT_EXEMPT = [r"^api/v1/health$"]
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": [
        "kingscorner.api.renderers.JSONRenderer",
        *(["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
    ],
    "DEFAULT_PARSER_CLASSES": ["kingscorner.api.parsers.JSONParser"],
    # DRF's negotiation, its choice for the usual Accept headers kept (kingscorner/api/negotiation.py).
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "kingscorner.api.negotiation.ContentNegotiation",
    "DEFAULT_AUTHENTICATION_CLASSES": ["games.apis.auth.BearerTokenAuthentication"],
    # Views that need a player say so (IsAuthenticated); public ones (health, daily deal) need nothing.
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "UNAUTHENTICATED_USER": None,
    # Per player with a token, per client address without one, read at each request; on Redis one atomic
    # round trip a request (kingscorner/api/throttling.py).
    "DEFAULT_THROTTLE_CLASSES": ["kingscorner.api.throttling.RateLimit"],
    # How many proxies in front append to X-Forwarded-For; 0 counts the connecting address, which a
    # client cannot forge.
    "NUM_PROXIES": env.int("NUM_PROXIES", default=0),
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("RATE_LIMIT_ANON", default="600/min"),
        "user": env.str("RATE_LIMIT_USER", default="1200/min"),
    },
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "kingscorner.api.errors.problem_exception_handler",
}

# The contract's version, semantic: in the OpenAPI document's info.version and every response's API-Version
# header. CHANGELOG.md lists what each version changed.
API_VERSION = "1.1.0"

SPECTACULAR_SETTINGS = {
    "TITLE": "Kings Corner API",
    "VERSION": API_VERSION,
    # The description, with the status rule and the error codes, is written from the registry of problem
    # codes by kingscorner.api.openapi.postprocess_schema.
    "OAS_VERSION": "3.1.0",
    "CONTACT": {"name": "Kings Corner API", "url": "https://kingscorner.example/"},
    "TAGS": [
        {"name": "players", "description": "Register, and manage your token."},
        {"name": "games", "description": "Games against the computer players: start, read, move, deal."},
        {
            "name": "tables",
            "description": "Tables with several people: invitations, starting, leaving, absent people "
            "replaced, rematches.",
        },
        {"name": "analysis", "description": "The moves of any position, with nothing stored."},
        {"name": "daily", "description": "The daily deal: the same cards for everyone, and a leaderboard."},
        {"name": "rules", "description": "The rules this API plays: the rule sets, options and document."},
        {"name": "service", "description": "The index of the API and its health."},
    ],
    "SERVE_INCLUDE_SCHEMA": False,
    # An enum's values are their own words; "* `waiting` - waiting" under each says nothing more.
    "ENUM_GENERATE_CHOICE_DESCRIPTION": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Enums stay inline where they are used: each operation's problem `code` is its own enum, and
    # drf-spectacular's default hook would hoist every enum into a component of a made-up name.
    "POSTPROCESSING_HOOKS": ["kingscorner.api.openapi.postprocess_schema"],
}

# Without a broker, tasks run in-process at `.delay()` time (those queued for a moment at that moment, by the
# in-process scheduler below); with one, a worker runs them.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="memory://")
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=CELERY_BROKER_URL == "memory://")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
CELERY_ENABLE_UTC = True
# The daily deal's job makes today's and tomorrow's deals, so each deal exists a day before it starts; the
# run at 12:05 UTC is a safety net for a missed one. DAILY_BEAT_INTERVAL_SECONDS replaces this schedule
# with a fixed interval, for end-to-end tests of beat.
DAILY_BEAT_INTERVAL_SECONDS = env.int("DAILY_BEAT_INTERVAL_SECONDS", default=0)
# How long an Idempotency-Key is honoured, and its stored response kept: a retry comes within seconds or
# minutes; a day covers a client that was offline overnight.
IDEMPOTENCY_KEY_TTL = timedelta(hours=env.int("IDEMPOTENCY_KEY_TTL_HOURS", default=24))
# A token rotation can be replayed (its response was lost) for this long, and only until its new token is
# used (games/rotation_replay.py): a leaked token must not buy its replacement.
ROTATION_REPLAY_SECONDS = env.int("ROTATION_REPLAY_SECONDS", default=300)
# How often the beat job plays the clocked turns past their deadline that no task played.
TURN_CLOCK_BEAT_SECONDS = env.int("TURN_CLOCK_BEAT_SECONDS", default=5)
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    # Deletes the Idempotency-Keys (and token rotations kept for their replay) older than
    # IDEMPOTENCY_KEY_TTL. Until it runs, an expired key is not honoured anyway.
    "idempotency-keys-expire": {
        "task": "games.tasks.idempotency_keys_expire",
        "schedule": crontab(minute=17),
        "options": {"expires": 60 * 60},
    },
    # Deletes the person stream's events older than PERSON_EVENTS_RETENTION_SECONDS.
    "person-events-prune": {
        "task": "games.tasks.person_events_prune",
        "schedule": crontab(minute=23),
        "options": {"expires": 60 * 60},
    },
    # Tells every person stream of the daily deal's day starting and its seed revealed, within a minute.
    "daily-events-announce": {
        "task": "daily.tasks.daily_events_announce",
        "schedule": crontab(),
        "options": {"expires": 60},
    },
    # Plays the turns past their deadline at clocked tables that no task played: a task lost, a worker that
    # was down (it catches up here when it returns), a deadline beyond the tasks' horizon.
    "turn-clocks-catch-up": {
        "task": "games.tasks.turn_clocks_catch_up",
        "schedule": timedelta(seconds=TURN_CLOCK_BEAT_SECONDS),
        "options": {"expires": TURN_CLOCK_BEAT_SECONDS},
    },
    "daily-deals-create": {
        "task": "daily.tasks.daily_deals_create",
        "schedule": timedelta(seconds=DAILY_BEAT_INTERVAL_SECONDS)
        if DAILY_BEAT_INTERVAL_SECONDS > 0
        else crontab(minute=5, hour="0,12"),
        # A run still queued when the next one is due is dropped; the next one does the same work.
        "options": {"expires": 6 * 60 * 60},
    },
    # Closes the ranked attempts left unfinished at their day's finishing deadline, within a minute of it, and
    # any day a stopped beat missed. The API never does this work: until it is done, its reads show those
    # attempts as closed and the day's leaderboard as `closing`. A run finds the due days with one indexed
    # query, so running every minute costs nothing on the other 1,439.
    "daily-attempts-close": {
        "task": "daily.tasks.daily_attempts_close",
        "schedule": crontab(),
        "options": {"expires": 60},
    },
    # Computes each day's par once the day is closed (a few seconds of CPU per day), and any day missed. Runs
    # that overlap split the days between them; a day with its par costs one indexed query.
    "daily-pars-compute": {
        "task": "daily.tasks.daily_pars_compute",
        "schedule": crontab(minute="*/5"),
        "options": {"expires": 5 * 60},
    },
}

# Without a broker the served process runs the schedule above itself, and the tasks queued for a moment (a
# turn's deadline) at that moment (kingscorner/scheduler.py): the quick start is the whole product. Off with a
# broker, where Celery beat and workers do it. The in-process schedule runs the par job every minute (its
# search runs in a process of its own), so that a day's par follows its close within a minute.
IN_PROCESS_SCHEDULER = env.bool("IN_PROCESS_SCHEDULER", default=CELERY_TASK_ALWAYS_EAGER)
IN_PROCESS_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    **CELERY_BEAT_SCHEDULE,
    "daily-pars-compute": {**CELERY_BEAT_SCHEDULE["daily-pars-compute"], "schedule": crontab()},
}

# Event streams (GET games/{id}/stream): a comment line this often keeps an idle stream's connection open
# through proxies and tells the client the server is there. A stream ticket opens (and re-opens) streams for
# this long, 6 hours: a browser's EventSource reconnects with the same URL after any network drop or server
# restart, so the ticket must outlive a session, not a minute; it still dies with the token it was asked for.
STREAM_HEARTBEAT_SECONDS = env.float("STREAM_HEARTBEAT_SECONDS", default=15.0)
STREAM_TICKET_SECONDS = env.int("STREAM_TICKET_SECONDS", default=6 * 3600)
# Open streams (held by uvicorn) per player and per client address, on every server together; each is a lease
# that lives three heartbeats unless renewed, so a server that dies leaves no phantom slot for long
# (games/stream_leases.py).
STREAMS_PER_PLAYER = env.int("STREAMS_PER_PLAYER", default=8)
STREAMS_PER_ADDRESS = env.int("STREAMS_PER_ADDRESS", default=32)
# The person stream (GET players/me/stream) keeps each player's events this long (the beat job prunes older
# ones; a stream that resumes from before them gets `resync`). A finished game's stream stays open this long
# after its end, for the `rematch` that may follow.
PERSON_EVENTS_RETENTION_SECONDS = env.int("PERSON_EVENTS_RETENTION_SECONDS", default=7 * 86400)
REMATCH_STREAM_SECONDS = env.int("REMATCH_STREAM_SECONDS", default=120)

DAILY_SECRET_DEVELOPMENT_DEFAULT = "insecure-local-daily-secret"
DAILY_SECRET = env.str("DAILY_SECRET", default=DAILY_SECRET_DEVELOPMENT_DEFAULT)
DAILY_EPOCH = date.fromisoformat(env.str("DAILY_EPOCH", default="2026-01-01"))
# The daily seeds are a reverse hash chain per season (docs/rules.md): the first season starts on
# DAILY_SEASON_START and each lasts DAILY_SEASON_DAYS days, the next starting the day after. Days from
# DAILY_EPOCH to the day before the first season keep the seeds of the HMAC of their date, as deals stored
# before the chain were dealt. Both are fixed forever once a season's anchor is published.
DAILY_SEASON_START = date.fromisoformat(env.str("DAILY_SEASON_START", default=DAILY_EPOCH.isoformat()))
DAILY_SEASON_DAYS = env.int("DAILY_SEASON_DAYS", default=3652)
DAILY_OPPONENT_LEVEL = env.str("DAILY_OPPONENT_LEVEL", default="normal")
# A ranked attempt may be finished until this long after its day's UTC midnight; the day's seed is revealed
# only then, so that nobody can re-deal the cards of a hand still in play.
DAILY_FINISH_GRACE_SECONDS = env.int("DAILY_FINISH_GRACE_SECONDS", default=3600)
# The par search's budget of nodes per day (games/engine/par.py; about 5,000 is a few seconds of one core).
DAILY_PAR_NODE_BUDGET = env.int("DAILY_PAR_NODE_BUDGET", default=5000)
