"""Tables played through their event streams on the production topology, started without Docker: nginx in
front of gunicorn (the API) and uvicorn (event streams), a Celery worker and beat, on the machine's
PostgreSQL and Redis. Two people play a whole table reacting only to their streams, as browser clients
would; the turn clock, run by the worker, plays a turn nobody played; a worker that was down catches up
through beat's job; everything shuts down cleanly. The tests run in file order and share one stack."""

import os
import shutil
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
import redis

from games.engine import Rules
from games.engine.players import best_turn
from tests.support.games import SEED
from tests.support.stack import Proxy, Stack, call, database_create, database_drop, nginx_binary
from tests.support.streams import EventStreamClient, Message, StreamClosed

pytestmark = pytest.mark.postgres

IN_CI = os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}
SERVER_URL = os.environ.get("E2E_DATABASE_SERVER_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_SERVER = os.environ.get("E2E_REDIS_URL", "redis://127.0.0.1:6379")
# Databases of their own: tests/e2e/test_topology.py uses 13 and 14; a stock Redis has 16.
BROKER_URL = f"{REDIS_SERVER}/11"
CACHE_URL = f"{REDIS_SERVER}/12"
# Bounds on waiting for what the services do; never a figure the test checks.
PATIENCE = 90.0


@dataclass
class Topology:
    stack: Stack
    proxy: Proxy
    database: str

    @property
    def port(self) -> int:
        return self.proxy.port


@pytest.fixture(scope="module")
def topology() -> Iterator[Topology]:
    if nginx_binary() is None:
        message = "needs nginx (Debian: apt-get install nginx); .ci/run installs it"
        if IN_CI:
            pytest.fail(f"CI is set but nginx is missing: {message}", pytrace=False)
        pytest.skip(message)
    name = f"kingscorner_streams_{uuid.uuid4().hex[:12]}"
    for url in (BROKER_URL, CACHE_URL):
        redis.Redis.from_url(url).flushdb()
    stack = Stack(
        database_url=database_create(SERVER_URL, name, fresh=True),
        broker_url=BROKER_URL,
        cache_url=CACHE_URL,
        extra_env={
            "NUM_PROXIES": "1",
            "TURN_CLOCK_BEAT_SECONDS": "1",
            "STREAM_HEARTBEAT_SECONDS": "5",
            "REMATCH_STREAM_SECONDS": "0",
        },
    )
    proxy: Proxy | None = None
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=2)
        stack.start_stream()
        stack.start_worker()
        stack.start_beat()
        proxy = Proxy(upstream=f"127.0.0.1:{stack.port}", stream_upstream=f"127.0.0.1:{stack.stream_port}")
        proxy.start()
        yield Topology(stack=stack, proxy=proxy, database=name)
    finally:
        if proxy is not None:
            proxy.close()
        stack.close()
        database_drop(SERVER_URL, name)
        shutil.rmtree(stack.logs, ignore_errors=True)


def _api(topology: Topology, method: str, path: str, body: Any = None, token: str = "") -> tuple[int, Any]:
    status, data, _ = call(topology.port, method, f"/api/v1/{path}", body, token)
    return status, data


def _player(topology: Topology, name: str) -> str:
    status, body = _api(topology, "POST", "players", {"name": name})
    assert status == 201, body
    return str(body["token"])


def _open(topology: Topology, game_id: str, token: str, after: int | None = None) -> EventStreamClient:
    """A stream opened through the proxy as a browser would: with a ticket, never the token, in the URL."""
    status, ticket = _api(topology, "POST", f"games/{game_id}/stream-tickets", token=token)
    assert status == 201, ticket
    query = "" if after is None else f"&last_event_id={after}"
    stream = EventStreamClient(
        topology.port, f"/api/v1/games/{game_id}/stream?ticket={ticket['ticket']}{query}"
    )
    assert stream.status == 200, stream.body()
    return stream


def _log(topology: Topology, game_id: str, token: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        status, page = _api(topology, "GET", f"games/{game_id}/events?after={after}", token=token)
        assert status == 200, page
        events += page["items"]
        after = page["more_after"]
        if page["next"] is None:
            return events


class Person(threading.Thread):
    """A client that only reacts to its stream: when an event says it may act (its turn began, a hand is
    over), it reads the game and acts on it: a whole turn as sharp's search plans it, or the next hand."""

    def __init__(self, topology: Topology, token: str, game_id: str, seat: int) -> None:
        super().__init__(daemon=True)
        self.topology = topology
        self.token = token
        self.game_id = game_id
        self.seat = seat
        self.received: list[Message] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            stream = _open(self.topology, self.game_id, self.token)
            try:
                self._act()  # it may be this seat's turn already
                while True:
                    message = stream.next(timeout=PATIENCE)
                    if message.event is None:
                        continue
                    self.received.append(message)
                    data = message.data
                    if (data["type"] == "turn_start" and data["seat"] == self.seat) or data[
                        "type"
                    ] == "hand_over":
                        self._act()
            except StreamClosed:
                return
            finally:
                stream.close()
        except BaseException as error:  # reported by the test
            self.error = error

    def _act(self) -> None:
        status, view = _api(self.topology, "GET", f"games/{self.game_id}", token=self.token)
        assert status == 200, view
        if view["status"] == "hand_over":
            status, body = _api(
                self.topology,
                "POST",
                f"games/{self.game_id}/hands",
                {"expected_version": view["version"]},
                self.token,
            )
            # The other person may have dealt it first.
            assert status == 200 or (
                status == 409 and body["code"] in ("version_conflict", "hand_in_progress")
            )
        elif view["is_your_turn"]:
            rules = Rules.from_json(view["rules"])
            moves = [move.to_json() for move in best_turn(rules, view["hand"], view["table"]["piles"])]
            status, body = _api(
                self.topology,
                "POST",
                f"games/{self.game_id}/moves",
                {"moves": moves, "expected_version": view["version"]},
                self.token,
            )
            assert status == 200, body


def test_two_people_play_a_table_to_the_end_through_their_streams(topology: Topology) -> None:
    ada, eve = _player(topology, "Ada"), _player(topology, "Eve")
    seats = [{"kind": "person"}, {"kind": "computer", "level": "normal"}, {"kind": "person"}]
    status, table = _api(topology, "POST", "games", {"seats": seats, "target_score": 20}, ada)
    assert status == 201 and table["status"] == "waiting", table
    status, joined = _api(topology, "POST", f"invitations/{table['invitation']['code']}", token=eve)
    assert status == 200 and joined["your_seat"] == 2, joined
    people = [
        Person(topology=topology, token=token, game_id=table["id"], seat=seat)
        for token, seat in ((ada, 0), (eve, 2))
    ]
    for person in people:
        person.start()
    for person in people:
        person.join(timeout=600)
        assert not person.is_alive(), "a client still waits on its stream"
        assert person.error is None, repr(person.error)
    status, final = _api(topology, "GET", f"games/{table['id']}", token=ada)
    assert final["status"] == "finished" and final["winners"], final
    for person in people:
        # Complete, in order, each once, as that seat may see them: the stream is the log.
        log = _log(topology, table["id"], person.token)
        assert [message.data for message in person.received] == log
        assert person.received[-1].event == "game_over"
        for message in person.received:
            if message.event == "draw" and message.data["seat"] != person.seat:
                assert "card" not in message.data
    # The stream was served by uvicorn through nginx, not by gunicorn.
    assert "/stream?ticket=" in topology.stack.log("stream")


def _first_events(stream: EventStreamClient, kind: str) -> list[Message]:
    """The events until the first of type `kind`, included."""
    events: list[Message] = []
    while not events or events[-1].event != kind:
        message = stream.next(timeout=PATIENCE)
        if message.event is not None:
            events.append(message)
    return events


def _clocked_game(topology: Topology, token: str) -> dict[str, Any]:
    """A one-hand game against one computer with a 10-second clock, from a seed where neither Ada's timed-out
    turn (played for her at normal) nor the computer's after it goes out: from a random deal one did in a few
    games in a hundred, and the hand ended with no next turn of hers."""
    body = {"opponents": 1, "turn_seconds": 10, "target_score": None, "seed": SEED}
    status, game = _api(topology, "POST", "games", body, token)
    assert status == 201 and game["is_your_turn"] and game["turn_deadline"], game
    return dict(game)


def test_the_worker_plays_a_turn_that_ran_out_and_the_stream_says_so(topology: Topology) -> None:
    ada = _player(topology, "Ada")
    game = _clocked_game(topology, ada)
    stream = _open(topology, game["id"], ada)
    try:
        events = _first_events(stream, "turn_timed_out")
        assert events[-1].data["seat"] == 0
        # What the computer at normal played for her follows, then the others' turns, up to her next turn.
        after = _first_events(stream, "turn_start")
        assert after[0].data["seat"] == 0 and after[0].event in ("play", "move_pile", "end_turn")
    finally:
        stream.close()
    assert "games.tasks.turn_time_out" in topology.stack.log("worker")


def _timed_out(topology: Topology, game_id: str) -> bool:
    with psycopg.connect(topology.stack.env["DATABASE_URL"]) as conn:
        row = conn.execute(
            "SELECT count(*) FROM games_gameevent WHERE game_id = %s AND type = 'turn_timed_out'", [game_id]
        ).fetchone()
    return bool(row and row[0])


def test_a_worker_that_was_down_catches_up_through_beat(topology: Topology) -> None:
    stack = topology.stack
    stack.stop("worker", sig=signal.SIGKILL)
    ada = _player(topology, "Ada")
    game = _clocked_game(topology, ada)
    # Past the deadline with no worker: nothing plays the turn. Its task is lost too (the broker's queue is
    # emptied, as if Redis had lost it), so only beat's catch-up job can play it.
    time.sleep(12)
    redis.Redis.from_url(BROKER_URL).flushdb()
    assert not _timed_out(topology, game["id"])
    stack.start_worker("worker-2")
    deadline = time.monotonic() + PATIENCE
    while not _timed_out(topology, game["id"]):
        assert time.monotonic() < deadline, stack.log("worker-2") + stack.log("beat")
        time.sleep(0.5)
    assert "games.tasks.turn_clocks_catch_up" in stack.log("worker-2")
    # Once: the stream shows one timeout, and the game goes on at Ada's next turn.
    stream = _open(topology, game["id"], ada)
    try:
        events = _first_events(stream, "turn_timed_out")
        later = _first_events(stream, "turn_start")
    finally:
        stream.close()
    assert [message.event for message in events + later].count("turn_timed_out") == 1


def test_everything_shuts_down_cleanly_with_a_stream_open(topology: Topology) -> None:
    ada = _player(topology, "Ada")
    status, game = _api(topology, "POST", "games", {"opponents": 1}, ada)
    assert status == 201, game
    stream = _open(topology, game["id"], ada)
    try:
        for name in ("beat", "worker-2", "stream", "web"):
            code = topology.stack.stop(name, sig=signal.SIGTERM, timeout=30)
            # uvicorn, once shut down, raises the signal it was stopped by again, as its exit status.
            expected = -signal.SIGTERM if name == "stream" else 0
            assert code == expected, f"{name} exited with {code}:\n{topology.stack.log(name)}"
        # The open stream ended as a stream does when uvicorn's graceful shutdown ran out; the client
        # reconnects, elsewhere.
        with pytest.raises(StreamClosed):
            while True:
                stream.next(timeout=30)
        assert "Exception in ASGI application" not in topology.stack.log("stream")
    finally:
        stream.close()
    assert topology.stack.processes == {}
