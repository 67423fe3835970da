"""Test-wide policy: hypothesis profiles, in-process Celery tasks, and real PostgreSQL and Redis under CI;
and the `caller` fixture the API tests share."""

from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings as hypothesis_settings

from tests.support.ci import IN_CI, POSTGRES_REQUIRED

if TYPE_CHECKING:
    from tests.support.games import Caller

hypothesis_settings.register_profile("default", deadline=None)
hypothesis_settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)

hypothesis_settings.load_profile("ci" if IN_CI else "default")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--write-examples",
        action="store_true",
        help="rewrite kingscorner/api/openapi_examples.json from what tests/contract/examples.py captures",
    )


def _database_vendor() -> str:
    from django.db import connection

    return connection.vendor


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under CI the run must use the real services, so it can never pass silently on SQLite or without a
    broker."""
    if POSTGRES_REQUIRED and _database_vendor() != "postgresql":
        pytest.exit(
            f"CI or REQUIRE_POSTGRES is set but the database is {_database_vendor()}: set DATABASE_URL to "
            "a postgres:// URL.",
            returncode=3,
        )
    if IN_CI:
        import redis
        from django.conf import settings

        if not settings.CELERY_BROKER_URL.startswith("redis://"):
            pytest.exit("CI is set but CELERY_BROKER_URL is not a redis:// URL.", returncode=3)
        try:
            redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_connect_timeout=5).ping()
        except redis.RedisError as error:
            pytest.exit(f"CI is set but Redis at CELERY_BROKER_URL does not answer: {error}", returncode=3)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("postgres") is None or _database_vendor() == "postgresql":
        return
    if POSTGRES_REQUIRED:
        pytest.fail("this test needs PostgreSQL, and CI or REQUIRE_POSTGRES is set", pytrace=False)
    pytest.skip("needs PostgreSQL: set DATABASE_URL=postgres://...")


@pytest.fixture(autouse=True, scope="session")
def _celery_tasks_run_in_process() -> None:
    """Tasks run at `.delay()` time, even where CELERY_BROKER_URL names Redis; a test of the real worker
    turns this off for itself. The in-process scheduler (kingscorner/scheduler.py) stays off, even in a
    server a test runs in its process, unless a test turns IN_PROCESS_SCHEDULER on."""
    from django.conf import settings

    from kingscorner.celery import app

    app.conf.update(task_always_eager=True, task_eager_propagates=True)
    settings.IN_PROCESS_SCHEDULER = False


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Each test starts with an empty cache, so rate-limit counters do not carry over between tests."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _responses_match_the_served_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every response a test gets from a documented operation through Django's test client (DRF's APIClient
    included) is checked against the OpenAPI document the API serves: its status, headers and body."""
    from django.test import Client

    from tests.support.openapi import check_response

    request = Client.request

    def checked(self: Client, **kwargs: Any) -> Any:
        response = request(self, **kwargs)
        check_response(response)
        return response

    monkeypatch.setattr(Client, "request", checked)


@pytest.fixture
def caller(db: None) -> "Caller":
    """A new player, Ada, with a client that speaks for her (tests/support/games.py)."""
    from tests.support.games import new_caller

    return new_caller()
