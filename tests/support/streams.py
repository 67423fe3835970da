"""Test and benchmark tooling for event streams: the ASGI application under uvicorn in a thread of the test
process (on the test database), and a client that reads one Server-Sent Events stream message by message."""

import http.client
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

import uvicorn

from tests.support.stack import free_port


class LiveAsgiServer:
    """kingscorner.asgi under uvicorn, in a thread of this process: it reads the database the tests write
    (which must commit for it to see anything: transactional tests) and the settings they change."""

    def __init__(self) -> None:
        from kingscorner.asgi import application

        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            application,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=1,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="live-asgi", daemon=True)

    def start(self, timeout: float = 30) -> None:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        from asgiref.sync import SyncToAsync

        self.server.should_exit = True
        self.thread.join(timeout=30)
        # The connections it kept (CONN_MAX_AGE): the stream readers', and the one of the thread that runs a
        # stream's synchronous steps (kingscorner.asgi), so that the test database can be dropped.
        readers_close()
        SyncToAsync.single_thread_executor.submit(_close_connection).result()


def readers_close() -> None:
    """Closes the stream readers' database connections, one a thread (a server that stops in a process that
    goes on, as the tests' does)."""
    from django.db import connection

    from kingscorner.off_loop import READ_THREADS, _executor

    if _executor is None:
        return
    barrier = threading.Barrier(READ_THREADS)

    def close() -> None:
        connection.close()
        # Each waits for the others, so that each of the threads takes one.
        barrier.wait(timeout=30)

    for done in [_executor.submit(close) for _ in range(READ_THREADS)]:
        done.result()


def _close_connection() -> None:
    """Closes the calling thread's database connection."""
    from django.db import connection

    connection.close()


@dataclass(frozen=True)
class Message:
    """One message of an event stream: an event (`id`, `event`, `data` read as JSON), a `retry`, or a
    comment (`: heartbeat`)."""

    id: int | None = None
    event: str | None = None
    data: Any = None
    retry: int | None = None
    comment: str | None = None


class StreamClosed(Exception):
    """The server ended the stream."""


class EventStreamClient:
    """One GET of an event stream, read message by message; `status` and `headers` are the response's."""

    def __init__(
        self, port: int, path: str, *, headers: dict[str, str] | None = None, timeout: float = 30
    ) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.connection.request("GET", path, headers={"Accept": "text/event-stream", **(headers or {})})
        self.response = self.connection.getresponse()
        self.status = self.response.status
        self.headers = {name.lower(): value for name, value in self.response.getheaders()}

    def body(self) -> Any:
        """A refusal's problem+json body."""
        return json.loads(self.response.read())

    def next(self, timeout: float = 30) -> Message:
        """The next message; StreamClosed when the stream ends, TimeoutError when none comes in time."""
        sock = self.connection.sock
        assert sock is not None
        sock.settimeout(timeout)
        fields: dict[str, str] = {}
        comment = None
        while True:
            try:
                raw = self.response.readline()
            except TimeoutError as error:
                raise TimeoutError(f"no message within {timeout}s") from error
            if not raw:
                raise StreamClosed()
            line = raw.decode().rstrip("\n").rstrip("\r")
            if line == "":
                if fields or comment is not None:
                    return Message(
                        id=int(fields["id"]) if "id" in fields else None,
                        event=fields.get("event"),
                        data=json.loads(fields["data"]) if "data" in fields else None,
                        retry=int(fields["retry"]) if "retry" in fields else None,
                        comment=comment,
                    )
                continue
            if line.startswith(":"):
                comment = line[1:].strip()
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")

    def events_until(self, last_seq: int, timeout: float = 30) -> list[Message]:
        """The events up to and including seq `last_seq` (skipping other messages)."""
        events: list[Message] = []
        while not events or events[-1].id is None or events[-1].id < last_seq:
            message = self.next(timeout)
            if message.event is not None:
                events.append(message)
        return events

    def rest(self, timeout: float = 30) -> list[Message]:
        """Every message until the stream ends."""
        messages = []
        try:
            while True:
                messages.append(self.next(timeout))
        except StreamClosed:
            return messages

    def close(self) -> None:
        self.connection.close()


def listening_streams() -> int:
    """How many streams of this process wait for wake-ups now."""
    from games import notifications

    return notifications._waiters.count()
