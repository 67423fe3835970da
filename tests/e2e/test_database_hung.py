"""A database that hangs (every PostgreSQL process stopped by SIGSTOP, so connections stay open and new ones
are accepted by the kernel, but nothing answers) hangs nothing: `health` answers 503 within its bound, an
operation that needs no database answers as usual, one that needs it gets 503 `database_unavailable` with
Retry-After once its deadline passes, and everything answers again once the server resumes. The server is the
test's own (tests/support/postgres.py); the timings are bench/database_hung.py's."""

import shutil
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.support.ci import IN_CI
from tests.support.postgres import PrivatePostgres, server_binaries
from tests.support.stack import Stack, call

pytestmark = pytest.mark.postgres

# The HTTP client's time-outs, far above the bounds (health 1.5 s; any other request the statement timeout
# plus a second): a request that outlives them hung.
HEALTH_HUNG_AFTER = 4.0
REQUEST_HUNG_AFTER = 15.0
STATEMENT_TIMEOUT = "2"
POSITION = {"hand": ["JS", "2D"], "piles": {"N": ["QD"]}, "stock": 10}


@dataclass
class Service:
    stack: Stack
    database: PrivatePostgres
    token: str
    game: str


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    if server_binaries() is None:
        message = "needs PostgreSQL's server binaries (/usr/lib/postgresql/*/bin)"
        if IN_CI:
            pytest.fail(f"CI is set but {message}", pytrace=False)
        pytest.skip(message)
    database = PrivatePostgres()
    stack = Stack(
        database_url=database.url,
        broker_url="memory://",
        cache_url="",
        extra_env={
            "CELERY_TASK_ALWAYS_EAGER": "true",
            "DATABASE_STATEMENT_TIMEOUT": STATEMENT_TIMEOUT,
            "DATABASE_CONNECT_TIMEOUT": "2",
            "GUNICORN_TIMEOUT": "60",
        },
    )
    try:
        database.start()
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=1)
        status, player, _ = call(stack.port, "POST", "/api/v1/players", {"name": "Ada"})
        assert status == 201, player
        status, game, _ = call(stack.port, "POST", "/api/v1/games", {"opponents": 1}, player["token"])
        assert status == 201, game
        yield Service(stack=stack, database=database, token=player["token"], game=game["id"])
    finally:
        stack.close()
        database.close()
        shutil.rmtree(stack.logs, ignore_errors=True)


@pytest.fixture
def hung(service: Service) -> Iterator[Service]:
    # The worker's connection is open (CONN_MAX_AGE) when the server stops, as in production.
    assert call(service.stack.port, "GET", "/api/v1/players/me", token=service.token)[0] == 200
    service.database.freeze()
    try:
        yield service
    finally:
        service.database.thaw()


def test_health_answers_503_database_unavailable_while_the_database_hangs(hung: Service) -> None:
    for _ in range(3):
        status, body, _ = call(hung.stack.port, "GET", "/api/v1/health", timeout=HEALTH_HUNG_AFTER)
        assert status == 503, (status, body, hung.stack.log("web"))
        assert (body["code"], body["database"]) == ("database_unavailable", "unavailable")


def test_an_operation_that_needs_no_database_answers_while_it_hangs(hung: Service) -> None:
    for path, body in (("/api/v1/analysis", POSITION), ("/api/v1/rules", None)):
        status, answer, _ = call(
            hung.stack.port, "POST" if body else "GET", path, body, timeout=HEALTH_HUNG_AFTER
        )
        assert status == 200, (path, status, answer, hung.stack.log("web"))


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/v1/players/me", None),
        ("GET", "/api/v1/games/{game}", None),
        ("POST", "/api/v1/games/{game}/moves", {"moves": [{"type": "end_turn"}]}),
        ("POST", "/api/v1/players", {"name": "Grace"}),
    ],
)
def test_an_operation_that_needs_the_database_answers_503_with_retry_after_while_it_hangs(
    hung: Service, method: str, path: str, body: object
) -> None:
    # Twice: the first finds the worker's open connection hung, the second has to connect.
    for _ in range(2):
        status, answer, _ = call(
            hung.stack.port,
            method,
            path.format(game=hung.game),
            body,
            hung.token,
            timeout=REQUEST_HUNG_AFTER,
        )
        assert status == 503, (status, answer, hung.stack.log("web"))
        assert answer["code"] == "database_unavailable"


def test_the_service_answers_again_once_the_database_resumes(service: Service) -> None:
    service.database.freeze()
    assert call(service.stack.port, "GET", "/api/v1/players/me", token=service.token)[0] == 503
    service.database.thaw()
    status, body, _ = call(service.stack.port, "GET", "/api/v1/health", timeout=REQUEST_HUNG_AFTER)
    assert (status, body["database"]) == (200, "ok")
    assert call(service.stack.port, "GET", "/api/v1/players/me", token=service.token)[0] == 200
