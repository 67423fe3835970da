"""A stream ticket is never written to an access log: the real uvicorn (kingscorner.asgi, as the stream server
runs) and the real gunicorn (kingscorner.gunicorn_conf, as the web runs) each serve a game's stream and the
person stream opened with `?ticket=`, and their logs name the path and `ticket=[redacted]`, never the
ticket."""

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


def _ticket(stack: Stack, stream: str) -> tuple[str, str]:
    """A ticket and the path of the stream it opens: a game's (`stream` "game") or the person stream."""
    status, player, _ = call(stack.port, "POST", "/api/v1/players", {"name": "Ada"})
    assert status == 201, player
    if stream == "person":
        path = "/api/v1/players/me/stream"
        tickets = "/api/v1/players/me/stream-tickets"
    else:
        status, game, _ = call(stack.port, "POST", "/api/v1/games", {"opponents": 1}, player["token"])
        assert status == 201, game
        path = f"/api/v1/games/{game['id']}/stream"
        tickets = f"/api/v1/games/{game['id']}/stream-tickets"
    status, ticket, _ = call(stack.port, "POST", tickets, None, player["token"])
    assert status == 201, ticket
    return path, str(ticket["ticket"])


def _logged(stack: Stack, name: str, text: str) -> str:
    deadline = time.monotonic() + PATIENCE
    while True:
        log = (stack.logs / f"{name}.log").read_text(errors="replace")
        if text in log or time.monotonic() > deadline:
            return log


@pytest.mark.parametrize("stream", ["game", "person"])
@pytest.mark.parametrize(("server", "port"), [("stream", "stream_port"), ("web", "port")])
def test_a_stream_opened_with_a_ticket_is_logged_without_the_ticket(
    stack: Stack, server: str, port: str, stream: str
) -> None:
    path, ticket = _ticket(stack, stream)
    # The ticket as EventSource sends it, beside another parameter, and under a name a client may encode.
    for query in (f"ticket={ticket}&last_event_id=0", f"last_event_id=0&%74icket={ticket}"):
        client = EventStreamClient(getattr(stack, port), f"{path}?{query}")
        assert client.status == 200
        # uvicorn holds the stream open; gunicorn sends what there is and ends it.
        first = client.next().retry if server == "stream" else client.response.read()[:6]
        assert first in (3000, b"retry:")
        client.close()
    log = _logged(stack, server, f"{path}?last_event_id=0&%74icket=[redacted]")
    assert f"{path}?ticket=[redacted]&last_event_id=0" in log, log
    assert f"{path}?last_event_id=0&%74icket=[redacted]" in log, log
    assert ticket not in log
    assert ticket.split(":")[0] not in log
