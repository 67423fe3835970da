"""A live server for the tests of what ships for users (the quick start's server: uvicorn serving
kingscorner.asgi, DEBUG off, tasks in-process, on a database of its own), a client of its API over HTTP, as a
third party would call it, and a game played through it."""

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.support.stack import Stack, database_create

MAX_MOVE_REQUESTS = 2000


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


def _live_database(tmp_dir: Path, suffix: str) -> tuple[str, str | None]:
    """The live server's database URL, and the PostgreSQL server URL to drop it from afterwards: a fresh
    PostgreSQL database beside DATABASE_URL's when that names PostgreSQL, otherwise a fresh SQLite file."""
    configured = os.environ.get("DATABASE_URL", "")
    if not configured.startswith(("postgres://", "postgresql://")):
        return f"sqlite:///{tmp_dir / 'live.sqlite3'}", None
    parts = urlsplit(configured)
    name = f"{parts.path.lstrip('/') or 'postgres'}_{suffix}_{os.getpid()}"
    server_url = urlunsplit(parts._replace(path="/postgres"))
    return database_create(server_url, name, fresh=True), server_url


@contextmanager
def live_server(
    tmp_dir: Path, *, suffix: str = "live", extra_env: Mapping[str, str] | None = None
) -> Iterator[Stack]:
    """The quick start's server on a free port, migrated, until the block ends (its database dropped then)."""
    database_url, server_url = _live_database(tmp_dir, suffix)
    stack = Stack(
        database_url=database_url,
        broker_url="memory://",
        cache_url="",
        extra_env={"CELERY_TASK_ALWAYS_EAGER": "true", "DAILY_EPOCH": "2026-01-01", **(extra_env or {})},
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
