"""Event streams through nginx (deploy/nginx.conf.template, run for real with the machine's nginx): a stream
whose upstream is down is closed without an answer, so that a browser's EventSource retries, while the rest of
the API still answers 502 problem+json; the access log names a stream's path but never its ticket; and with
two uvicorn processes behind one stream upstream, a move sent through the API reaches the streams each of
them holds."""

import http.client
import json
import os
import shutil
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis

from tests.support.ci import IN_CI
from tests.support.games import SEED
from tests.support.stack import Proxy, Stack, call, database_create, database_drop, free_port, nginx_binary
from tests.support.streams import EventStreamClient, Message

pytestmark = pytest.mark.postgres

SERVER_URL = os.environ.get("E2E_DATABASE_SERVER_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_SERVER = os.environ.get("E2E_REDIS_URL", "redis://127.0.0.1:6379")
# A database of its own for the cache and the streams' wake-ups (tasks run in-process: no broker). The other
# e2e tests use 9 to 14; a stock Redis has 16.
CACHE_URL = f"{REDIS_SERVER}/8"
# Bounds on waiting for what the services do; never a figure the test checks.
PATIENCE = 30.0


@dataclass
class Streams:
    stack: Stack
    proxy: Proxy
    # The two uvicorn processes' ports, both servers of the proxy's stream upstream.
    stream_ports: tuple[int, int]


@pytest.fixture(scope="module")
def streams() -> Iterator[Streams]:
    if nginx_binary() is None:
        message = "needs nginx (Debian: apt-get install nginx); .ci/run installs it"
        if IN_CI:
            pytest.fail(f"CI is set but nginx is missing: {message}", pytrace=False)
        pytest.skip(message)
    name = f"kingscorner_proxy_streams_{uuid.uuid4().hex[:12]}"
    redis.Redis.from_url(CACHE_URL).flushdb()
    stack = Stack(
        database_url=database_create(SERVER_URL, name, fresh=True),
        broker_url="memory://",
        cache_url=CACHE_URL,
        extra_env={"CELERY_TASK_ALWAYS_EAGER": "true", "NUM_PROXIES": "1", "STREAM_HEARTBEAT_SECONDS": "5"},
    )
    proxy: Proxy | None = None
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=2)
        ports = (stack.start_stream(name="stream-1"), stack.start_stream(name="stream-2"))
        proxy = Proxy(
            upstream=f"127.0.0.1:{stack.port}",
            stream_upstream=", ".join(f"127.0.0.1:{port}" for port in ports),
        )
        proxy.start()
        yield Streams(stack=stack, proxy=proxy, stream_ports=ports)
    finally:
        if proxy is not None:
            proxy.close()
        stack.close()
        shutil.rmtree(stack.logs, ignore_errors=True)
        database_drop(SERVER_URL, name)


def _api(streams: Streams, method: str, path: str, body: Any = None, token: str = "") -> Any:
    status, data, _ = call(streams.proxy.port, method, f"/api/v1/{path}", body, token)
    assert status in (200, 201), (method, path, status, data)
    return data


def _raw_get(port: int, path: str) -> bytes:
    """Everything the server sends to a bare GET of `path` before it closes (or resets) the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=PATIENCE) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except ConnectionResetError:
            # nginx resets a connection it closes with 444 (reset_timedout_connection): a network error too.
            pass
        return received


def _game(streams: Streams) -> tuple[str, dict[str, Any]]:
    """Ada's game against one computer, from a seed whose computer does not go out on its first turn: from a
    random deal it did about once in 30 games, and with Ada's penalty the game was over, with no next turn of
    hers to wait for."""
    token = _api(streams, "POST", "players", {"name": "Ada"})["token"]
    return token, _api(streams, "POST", "games", {"opponents": 1, "seed": SEED}, token)


def _ticket(streams: Streams, game_id: str, token: str) -> str:
    return str(_api(streams, "POST", f"games/{game_id}/stream-tickets", token=token)["ticket"])


def test_a_stream_whose_upstream_is_down_is_closed_without_an_answer_and_the_api_is_a_502_problem() -> None:
    if nginx_binary() is None:
        pytest.skip("needs nginx")
    # Nothing listens on either upstream.
    proxy = Proxy(upstream=f"127.0.0.1:{free_port()}", stream_upstream=f"127.0.0.1:{free_port()}")
    try:
        proxy.start()
        game_stream = _raw_get(proxy.port, f"/api/v1/games/{uuid.uuid4()}/stream?ticket=t")
        person_stream = _raw_get(proxy.port, "/api/v1/players/me/stream?ticket=t")
        status, headers, body = _plain_get(proxy.port, "/api/v1/health")
    finally:
        proxy.close()
    # No status line at all: EventSource takes it for a network error and reconnects after its `retry`.
    assert (game_stream, person_stream) == (b"", b"")
    assert status == 502 and headers["content-type"] == "application/problem+json"
    assert body["code"] == "bad_gateway"


def _plain_get(port: int, path: str) -> tuple[int, dict[str, str], Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=PATIENCE)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    headers = {name.lower(): value for name, value in response.getheaders()}
    return response.status, headers, json.loads(data)


def test_a_refusal_uvicorn_sends_on_a_stream_passes_through_unchanged(streams: Streams) -> None:
    stream = EventStreamClient(streams.proxy.port, f"/api/v1/games/{uuid.uuid4()}/stream?ticket=forged")
    try:
        assert stream.status == 401
        assert stream.headers["content-type"] == "application/problem+json"
        assert stream.body()["code"] == "invalid_ticket"
    finally:
        stream.close()


def _logged_lines(proxy: Proxy, fragments: tuple[str, ...], count: int) -> tuple[str, list[str]]:
    """The access log, and its lines that hold one of `fragments`, once there are `count` of them (nginx
    writes a line as its request ends, a stream's once it notices the client has gone)."""
    deadline = time.monotonic() + PATIENCE
    while True:
        log = proxy.access_log()
        lines = [line for line in log.splitlines() if any(fragment in line for fragment in fragments)]
        if len(lines) >= count:
            return log, lines
        assert time.monotonic() < deadline, log[-4000:]
        time.sleep(0.1)


def test_the_access_log_names_a_streams_path_but_never_its_ticket(streams: Streams) -> None:
    token, game = _game(streams)
    ticket = _ticket(streams, game["id"], token)
    path = f"/api/v1/games/{game['id']}/stream"
    stream = EventStreamClient(streams.proxy.port, f"{path}?ticket={ticket}&last_event_id=1")
    try:
        assert stream.status == 200
        assert stream.next(timeout=PATIENCE).retry is not None
    finally:
        stream.close()
    # A second ticket in the query, or the name percent-encoded (as Django would decode it, and the path
    # too), hides nothing.
    for query in (f"ticket=x&ticket={ticket}", f"ti%63ket={ticket}", f"last_event_id=1&ticket={ticket}"):
        EventStreamClient(streams.proxy.port, f"{path}?{query}").close()
    encoded = path.replace("/stream", "/str%65am")
    EventStreamClient(streams.proxy.port, f"{encoded}?ti%63ket={ticket}").close()
    # And a ticket on the person stream's path (refused there: it is a game's) is redacted too.
    EventStreamClient(streams.proxy.port, f"/api/v1/players/me/stream?ticket={ticket}&x=1").close()
    log, lines = _logged_lines(streams.proxy, (f"{path}?", f"{encoded}?", "/players/me/stream?ticket="), 6)
    assert ticket not in log
    assert sorted(line.split('"')[1] for line in lines) == sorted(
        [
            f"GET {path}?ticket=[redacted]&last_event_id=1 HTTP/1.1",
            f"GET {path}?[redacted] HTTP/1.1",
            f"GET {path}?[redacted] HTTP/1.1",
            f"GET {path}?last_event_id=1&ticket=[redacted] HTTP/1.1",
            f"GET {encoded}?[redacted] HTTP/1.1",
            "GET /api/v1/players/me/stream?ticket=[redacted]&x=1 HTTP/1.1",
        ]
    )
    # The rest of nginx's combined format is kept: address, time, status, size, referrer and user agent.
    opened = next(line for line in lines if "&last_event_id=1 HTTP" in line)
    assert opened.startswith("127.0.0.1 - - [") and '" 200 ' in opened and opened.endswith('"-" "-"')


def _log_after(streams: Streams, game_id: str, token: str, after: int) -> list[dict[str, Any]]:
    page = _api(streams, "GET", f"games/{game_id}/events?after={after}&limit=1000", token=token)
    return list(page["items"])


def _backlog(stream: EventStreamClient) -> list[Message]:
    """The events a stream sends as it opens: everything up to its first heartbeat (a stream sends what it
    has at once, and a heartbeat only after STREAM_HEARTBEAT_SECONDS of nothing)."""
    events: list[Message] = []
    while (message := stream.next(timeout=PATIENCE)).comment != "heartbeat":
        if message.event is not None:
            events.append(message)
    return events


def test_a_move_sent_through_one_process_reaches_the_streams_each_process_holds(streams: Streams) -> None:
    token, game = _game(streams)
    game_path = f"/api/v1/games/{game['id']}/stream?ticket={_ticket(streams, game['id'], token)}"
    person_ticket = _api(streams, "POST", "players/me/stream-tickets", token=token)["ticket"]
    person_path = f"/api/v1/players/me/stream?ticket={person_ticket}"
    last = _log_after(streams, game["id"], token, 0)[-1]["seq"]
    logs = {name: streams.stack.logs / f"{name}.log" for name in ("stream-1", "stream-2")}
    logged_before = {name: path.stat().st_size for name, path in logs.items()}
    # Of each stream, one straight to each uvicorn process and two through nginx, which shares them out
    # between both: eight, the player's cap.
    games = [EventStreamClient(port, game_path) for port in streams.stream_ports]
    games += [EventStreamClient(streams.proxy.port, game_path) for _ in range(2)]
    people = [EventStreamClient(port, person_path) for port in streams.stream_ports]
    people += [EventStreamClient(streams.proxy.port, person_path) for _ in range(2)]
    try:
        assert [stream.status for stream in games + people] == [200] * 8
        for stream in games:
            assert stream.events_until(last, timeout=PATIENCE)[-1].id == last
        # What the person's feed held before the move, the same on each of its streams.
        backlogs = [[message.id for message in _backlog(stream)] for stream in people]
        assert all(backlog == backlogs[0] for backlog in backlogs)
        person_last = max((seq for seq in backlogs[0] if seq is not None), default=0)
        # Each process holds a stream of each kind through nginx: each logged two GETs of each path (one
        # direct, one proxied).
        for name, path in logs.items():
            with path.open("rb") as file:
                file.seek(logged_before[name])
                log = file.read().decode(errors="replace")
            assert log.count(f"GET /api/v1/games/{game['id']}/stream") == 2, log
            assert log.count("GET /api/v1/players/me/stream") == 2, log
        # Ending the turn: the computer plays its own, and Ada's next turn begins. The move goes to gunicorn
        # (the web upstream), neither stream process.
        _api(
            streams,
            "POST",
            f"games/{game['id']}/moves",
            {"moves": [{"type": "end_turn"}], "expected_version": game["version"]},
            token,
        )
        # (The computer's turn may be committed just after the answer: the log is read until Ada's turn.)
        deadline = time.monotonic() + PATIENCE
        expected = _log_after(streams, game["id"], token, last)
        while not any(event["type"] == "turn_start" and event["seat"] == 0 for event in expected):
            assert time.monotonic() < deadline, expected
            time.sleep(0.1)
            expected = _log_after(streams, game["id"], token, last)
        for stream in games:
            got = stream.events_until(expected[-1]["seq"], timeout=PATIENCE)
            assert [message.data for message in got] == expected
            assert [message.id for message in got] == [event["seq"] for event in expected]
        for stream in people:
            got = stream.events_until(person_last + 1, timeout=PATIENCE)
            assert [(message.id, message.event) for message in got] == [(person_last + 1, "your_turn")]
            assert {"game": game["id"], "seat": 0}.items() <= got[0].data.items()
    finally:
        for stream in games + people:
            stream.close()
