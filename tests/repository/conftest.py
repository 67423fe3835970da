"""A live server for the tests of what ships for users (the README's walkthrough, the daily verifier): the
quick start's server, uvicorn serving kingscorner.asgi, on a free port with DEBUG off, tasks in-process, on a
database of its own: a fresh PostgreSQL database beside DATABASE_URL's when that names PostgreSQL, otherwise a
fresh SQLite file."""

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.support.stack import Stack, database_create


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
