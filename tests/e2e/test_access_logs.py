"""A stream ticket is never written to an access log: the real uvicorn (kingscorner.asgi, as the stream server
runs) and the real gunicorn (kingscorner.gunicorn_conf, as the web runs) each serve a stream opened with
`?ticket=`, and their logs name the path and `ticket=[redacted]`, never the ticket."""

import os
import shutil
import time
import uuid
from collections.abc import Iterator

import pytest

from tests.support.stack import Stack, call, database_create, database_drop
from tests.support.streams import EventStreamClient

pytestmark = pytest.mark.postgres

SERVER_URL = os.environ.get("E2E_DATABASE_SERVER_URL", "postgres://postgres@127.0.0.1:5432/postgres")
# A bound on waiting for a log line to be written; never a figure the test checks.
PATIENCE = 30.0


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    name = f"kingscorner_logs_{uuid.uuid4().hex[:12]}"
    stack = Stack(
        database_url=database_create(SERVER_URL, name, fresh=True),
        broker_url="memory://",
        cache_url=os.environ.get("REDIS_URL", ""),
        extra_env={"CELERY_TASK_ALWAYS_EAGER": "true"},
    )
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=1)
        stack.start_stream()
        yield stack
    finally:
        stack.close()
        database_drop(SERVER_URL, name)
        shutil.rmtree(stack.logs, ignore_errors=True)


def _ticket(stack: Stack) -> tuple[str, str]:
    status, player, _ = call(stack.port, "POST", "/api/v1/players", {"name": "Ada"})
    assert status == 201, player
    status, game, _ = call(stack.port, "POST", "/api/v1/games", {"opponents": 1}, player["token"])
    assert status == 201, game
    status, ticket, _ = call(
        stack.port, "POST", f"/api/v1/games/{game['id']}/stream-tickets", None, player["token"]
    )
    assert status == 201, ticket
    return str(game["id"]), str(ticket["ticket"])


def _logged(stack: Stack, name: str, text: str) -> str:
    deadline = time.monotonic() + PATIENCE
    while True:
        log = (stack.logs / f"{name}.log").read_text(errors="replace")
        if text in log or time.monotonic() > deadline:
            return log


@pytest.mark.parametrize(("server", "port"), [("stream", "stream_port"), ("web", "port")])
def test_a_stream_opened_with_a_ticket_is_logged_without_the_ticket(
    stack: Stack, server: str, port: str
) -> None:
    game_id, ticket = _ticket(stack)
    path = f"/api/v1/games/{game_id}/stream"
    # The ticket as EventSource sends it, beside another parameter, and under a name a client may encode.
    for query in (f"ticket={ticket}&last_event_id=0", f"last_event_id=0&%74icket={ticket}"):
        stream = EventStreamClient(getattr(stack, port), f"{path}?{query}")
        assert stream.status == 200
        # uvicorn holds the stream open; gunicorn sends what there is and ends it.
        first = stream.next().retry if server == "stream" else stream.response.read()[:6]
        assert first in (3000, b"retry:")
        stream.close()
    log = _logged(stack, server, f"{path}?last_event_id=0&%74icket=[redacted]")
    assert f"{path}?ticket=[redacted]&last_event_id=0" in log, log
    assert f"{path}?last_event_id=0&%74icket=[redacted]" in log, log
    assert ticket not in log
    assert ticket.split(":")[0] not in log
