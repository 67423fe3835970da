"""The production topology as docker-compose.yml declares it (no Docker engine runs in CI, so it is read)."""

import configparser
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return document


def _command(service: dict[str, Any]) -> str:
    command = service["command"]
    return " ".join(command) if isinstance(command, list) else command


def test_compose_declares_the_production_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {
        "proxy",
        "postgres",
        "pgbouncer",
        "redis",
        "migrate",
        "web",
        "stream",
        "worker",
        "beat",
    }


def test_datastores_are_postgres_16_and_redis_7_with_health_checks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["postgres"]["image"] == "postgres:16"
    assert services["redis"]["image"] == "redis:7"
    for name in ("postgres", "redis"):
        assert services[name]["healthcheck"]["test"]
        assert services[name]["restart"] == "unless-stopped"


def test_migrate_runs_once_before_the_application_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert (
        _command(services["migrate"])
        == "sh -c python manage.py migrate --noinput && python manage.py daily_anchor"
    )
    assert services["migrate"]["restart"] == "no"
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("web", "stream", "worker", "beat"):
        depends = services[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully"
        assert depends["redis"]["condition"] == "service_healthy"
        assert services[name]["restart"] == "unless-stopped"
        assert services[name]["healthcheck"]["test"]


def test_web_is_gunicorn_with_its_worker_count_from_the_environment(compose: dict[str, Any]) -> None:
    web = compose["services"]["web"]
    assert _command(web).startswith("gunicorn kingscorner.wsgi")
    assert "python:kingscorner.gunicorn_conf" in _command(web)
    assert "WEB_CONCURRENCY" in web["environment"]
    config = (ROOT / "kingscorner" / "gunicorn_conf.py").read_text()
    assert 'os.environ.get("WEB_CONCURRENCY"' in config
    assert "/api/v1/health" in " ".join(web["healthcheck"]["test"])


def test_only_the_proxy_is_published_and_it_runs_the_repositorys_nginx_template(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"proxy"}
    proxy = services["proxy"]
    assert proxy["image"].startswith("nginx:")
    assert "./deploy/nginx.conf.template:/etc/nginx/templates/default.conf.template:ro" in proxy["volumes"]
    assert proxy["environment"]["PROXY_UPSTREAM"] == "web:8000"
    assert proxy["ports"] == ["${WEB_PORT:-8000}:80"] and proxy["environment"]["PROXY_LISTEN_PORT"] == "80"
    assert proxy["depends_on"]["web"]["condition"] == "service_healthy"
    assert proxy["depends_on"]["stream"]["condition"] == "service_healthy"
    assert "/api/v1/health" in " ".join(proxy["healthcheck"]["test"])
    assert proxy["restart"] == "unless-stopped"


def test_event_streams_are_served_by_uvicorn_behind_the_proxy(compose: dict[str, Any]) -> None:
    services = compose["services"]
    stream = services["stream"]
    assert _command(stream).startswith("uvicorn kingscorner.asgi:application --host 0.0.0.0 --port 8000")
    assert "--timeout-graceful-shutdown" in _command(stream)
    assert not stream.get("ports") and stream["expose"] == ["8000"]
    assert services["proxy"]["environment"]["PROXY_STREAM_UPSTREAM"] == "stream:8000"
    assert "/api/v1/health" in " ".join(stream["healthcheck"]["test"])
    assert stream["environment"]["NUM_PROXIES"] == services["web"]["environment"]["NUM_PROXIES"]
    template = (ROOT / "deploy" / "nginx.conf.template").read_text()
    location = template.split("location ~ ^/api/v1/(?:games/[^/]+|players/me)/stream$ {", 1)[1]
    location = location.split("}", 1)[0]
    assert "proxy_pass http://kingscorner_stream;" in location and "proxy_buffering off;" in location
    assert "error_page 502 504 = @stream_unavailable;" in location
    assert "server ${PROXY_STREAM_UPSTREAM};" in template
    # The script that makes a list of servers into `server` lines runs before the image fills in the template.
    envsh = "./deploy/nginx-upstreams.envsh:/docker-entrypoint.d/19-kingscorner-upstreams.envsh:ro"
    assert envsh in services["proxy"]["volumes"]


def test_the_proxy_and_the_api_share_one_body_limit_and_the_api_trusts_one_proxy(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    assert (
        services["proxy"]["environment"]["MAX_BODY_BYTES"] == services["web"]["environment"]["MAX_BODY_BYTES"]
    )
    assert services["web"]["environment"]["NUM_PROXIES"] == "${NUM_PROXIES:-1}"


def test_every_variable_of_the_nginx_template_is_set_for_the_proxy(compose: dict[str, Any]) -> None:
    template = (ROOT / "deploy" / "nginx.conf.template").read_text()
    used = set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)\}", template))
    assert used == set(compose["services"]["proxy"]["environment"])


def test_worker_and_exactly_one_beat_run_the_celery_app(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert _command(services["worker"]).startswith("celery -A kingscorner worker")
    assert _command(services["beat"]).startswith("celery -A kingscorner beat")
    assert services["beat"]["deploy"]["replicas"] == 1


def test_every_application_service_gets_the_production_environment(compose: dict[str, Any]) -> None:
    required = {
        "SECRET_KEY",
        "DAILY_SECRET",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "REDIS_URL",
        "ALLOWED_HOSTS",
    }
    for name in ("migrate", "web", "stream", "worker", "beat"):
        environment = compose["services"][name]["environment"]
        assert required <= set(environment), name
        assert environment["DEBUG"] == "false"
        # The migration straight to PostgreSQL; the services through the pooler, without prepared statements.
        if name == "migrate":
            assert "@postgres:5432/" in environment["DATABASE_URL"]
        else:
            assert "@pgbouncer:6432/" in environment["DATABASE_URL"]
            assert environment["DATABASE_PREPARED_STATEMENTS"] == "false"
        assert environment["CELERY_BROKER_URL"].startswith("redis://redis:6379")


def test_every_variable_the_compose_file_sets_is_read_by_the_settings(compose: dict[str, Any]) -> None:
    settings_text = (ROOT / "kingscorner" / "settings.py").read_text()
    gunicorn_text = (ROOT / "kingscorner" / "gunicorn_conf.py").read_text()
    for name in compose["services"]["web"]["environment"]:
        assert re.search(rf'"{name}"', settings_text + gunicorn_text), f"{name} is not read anywhere"


def test_dockerfile_builds_the_one_image_for_every_service() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert dockerfile.startswith("#") and "FROM python:3.11" in dockerfile
    assert "pip wheel --no-deps --wheel-dir /wheels ." in dockerfile
    assert "pip install /wheels/*.whl" in dockerfile
    assert "USER kingscorner" in dockerfile
    assert "gunicorn" in dockerfile


def test_pgbouncer_pools_transactions_and_sets_the_requests_statement_timeout(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    pooler = services["pgbouncer"]
    assert "./deploy/pgbouncer.ini:/etc/pgbouncer/pgbouncer.ini:ro" in pooler["volumes"]
    assert "exec pgbouncer /etc/pgbouncer/pgbouncer.ini" in " ".join(pooler["entrypoint"])
    assert pooler["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert not pooler.get("ports") and pooler["expose"] == ["6432"]
    for name in ("web", "stream", "worker", "beat"):
        assert "pgbouncer" in services[name]["depends_on"]
    config = configparser.ConfigParser(interpolation=None, comment_prefixes=(";", "#"), delimiters=("=",))
    config.read_string((ROOT / "deploy" / "pgbouncer.ini").read_text())
    assert config["pgbouncer"]["pool_mode"] == "transaction"
    assert config["pgbouncer"]["listen_port"] == "6432"
    # The application's `options` (its statement timeout) is dropped, not refused, and the timeout is set on
    # every server connection instead: the same as DATABASE_STATEMENT_TIMEOUT's default in the compose file.
    assert "options" in config["pgbouncer"]["ignore_startup_parameters"].split(",")
    default = re.search(
        r"DATABASE_STATEMENT_TIMEOUT:-(\d+)", services["web"]["environment"]["DATABASE_STATEMENT_TIMEOUT"]
    )
    assert default is not None
    milliseconds = int(default.group(1)) * 1000
    entries = list(config["databases"].values())
    assert entries and all(
        f"connect_query='SET statement_timeout = {milliseconds}'" in entry for entry in entries
    )
    assert all("host=postgres port=5432" in entry for entry in entries)
