"""A database that does not answer is a 503 `database_unavailable` with Retry-After on every endpoint, not a
500: the connection is pointed at a server that is not there, as when PostgreSQL is down."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import DatabaseError, IntegrityError, OperationalError, connection
from rest_framework.test import APIClient

from kingscorner.api.errors import database_unavailable
from tests.support.problems import PROBLEM
from tests.support.stack import free_port


@contextmanager
def _database_pointed_nowhere() -> Iterator[None]:
    """The default connection, closed and pointed at a port no one listens on; restored afterwards. (SQLite's
    in-memory test database cannot be taken away: tests/contract refuses its cursors instead.)"""
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update({"HOST": "127.0.0.1", "PORT": str(free_port())})
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


@pytest.fixture
def database_down() -> Iterator[None]:
    with _database_pointed_nowhere():
        yield


GAME = "/api/v1/games/8f1e1d3c-6a55-4b39-9a49-1d3c6a554b39"
# Each with a body it would accept, so that only the database stands in its way.
ENDPOINTS: list[tuple[str, str, Any]] = [
    ("get", "/api/v1/health", None),
    ("post", "/api/v1/players", {"name": "Ada"}),
    ("get", "/api/v1/players/me", None),
    ("get", "/api/v1/games", None),
    ("post", "/api/v1/games", {}),
    ("get", GAME, None),
    ("post", f"{GAME}/moves", {"moves": [{"type": "end_turn"}]}),
    ("get", "/api/v1/daily", None),
    ("get", "/api/v1/daily/2026-03-05/leaderboard", None),
    ("post", "/api/v1/analysis", {"hand": ["QD"]}),
    # Not an API view: the admin reads its session from the database in middleware, before any view.
    ("get", "/admin/", None),
]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS)
def test_every_endpoint_answers_503_database_unavailable_with_retry_after_while_the_database_is_down(
    database_down: None, method: str, path: str, body: Any
) -> None:
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION="Bearer kc_some-token")
    client.cookies["sessionid"] = "a-session-of-an-operator"
    if method == "get":
        response = client.get(path)
    else:
        response = client.post(path, body, format="json")
    assert (response.status_code, response["Content-Type"]) == (503, PROBLEM), response.content
    assert response.json()["code"] == "database_unavailable"
    assert int(response["Retry-After"]) >= 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_service_answers_again_once_the_database_is_back() -> None:
    client = APIClient()
    with _database_pointed_nowhere():
        assert client.get("/api/v1/health").status_code == 503
    assert client.get("/api/v1/health").status_code == 200


class _Sqlstate(Exception):
    def __init__(self, sqlstate: str | None) -> None:
        self.sqlstate = sqlstate


def _wrapped(error: DatabaseError, sqlstate: str | None) -> DatabaseError:
    error.__cause__ = _Sqlstate(sqlstate)
    return error


@pytest.mark.parametrize(
    ("error", "unavailable"),
    [
        (_wrapped(OperationalError("connection failed"), None), True),
        (_wrapped(OperationalError("connection lost"), "08006"), True),
        (_wrapped(OperationalError("too many connections"), "53300"), True),
        (_wrapped(OperationalError("the database system is shutting down"), "57P01"), True),
        (_wrapped(OperationalError("deadlock detected"), "40P01"), False),
        (_wrapped(OperationalError("canceling statement due to statement timeout"), "57014"), True),
        (_wrapped(IntegrityError("duplicate key"), "23505"), False),
        (DatabaseError("syntax error"), False),
    ],
)
def test_only_a_database_that_cannot_be_reached_or_times_out_is_unavailable_a_failing_query_is_a_bug(
    error: DatabaseError, unavailable: bool
) -> None:
    assert database_unavailable(error) is unavailable
