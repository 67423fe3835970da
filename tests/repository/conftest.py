"""A live server for the tests of what ships for users (the README's walkthrough, the daily verifier): the
quick start's server, uvicorn serving kingscorner.asgi, on a free port with DEBUG off, tasks in-process, on a
database of its own: a fresh PostgreSQL database beside DATABASE_URL's when that names PostgreSQL, otherwise a
fresh SQLite file."""

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.support.stack import Stack, database_create

MAX_MOVE_REQUESTS = 2000


def _database(tmp_dir: Path) -> tuple[str, str | None]:
    """The live server's database URL, and the PostgreSQL server URL to drop it from afterwards."""
    configured = os.environ.get("DATABASE_URL", "")
    if not configured.startswith(("postgres://", "postgresql://")):
        return f"sqlite:///{tmp_dir / 'live.sqlite3'}", None
    parts = urlsplit(configured)
    name = f"{parts.path.lstrip('/') or 'postgres'}_live_{os.getpid()}"
    server_url = urlunsplit(parts._replace(path="/postgres"))
    return database_create(server_url, name, fresh=True), server_url


@pytest.fixture(scope="session")
def live_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    database_url, server_url = _database(tmp_path_factory.mktemp("live-server"))
    stack = Stack(
        database_url=database_url,
        broker_url="memory://",
        cache_url="",
        extra_env={"CELERY_TASK_ALWAYS_EAGER": "true", "DAILY_EPOCH": "2026-01-01"},
    )
    try:
        stack.manage("migrate", "--noinput")
        stack.start_web(workers=1, asgi=True)
        yield stack
    finally:
        stack.close()
        if server_url is not None:
            name = urlsplit(database_url).path.lstrip("/")
            with psycopg.connect(server_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def api(base_url: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    """One JSON request to the live server's API; an error status fails the test with the problem."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{base_url}/api/v1/{path}", data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        pytest.fail(f"{method} {path} answered {error.code}: {error.read().decode(errors='replace')}")


def play_to_the_end(base_url: str, token: str, game: dict[str, Any]) -> dict[str, Any]:
    """Plays a game through with the first legal move each time (a play whenever one is open) and returns
    its last view."""
    for _ in range(MAX_MOVE_REQUESTS):
        if game["status"] != "playing":
            return game
        body = {"moves": [game["legal_moves"][0]], "expected_version": game["version"]}
        game = api(base_url, "POST", f"games/{game['id']}/moves", body, token)
    pytest.fail("the game did not end within the request budget")
