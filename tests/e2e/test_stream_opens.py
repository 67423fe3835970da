"""Opening event streams on uvicorn as deployed (kingscorner.asgi, on PostgreSQL and Redis): opens do not wait
for each other, so that one whose authentication waits on a database lock holds no other back; and the process
holds a bounded number of Redis connections whatever the number of streams open, and none that only a stream
needed once they have closed."""

import http.client
import json
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import psycopg
import pytest
import redis

from kingscorner.off_loop import READ_THREADS
from tests.support.stack import Stack, call, database_create, database_drop
from tests.support.streams import EventStreamClient

pytestmark = pytest.mark.postgres

SERVER_URL = os.environ.get("E2E_DATABASE_SERVER_URL", "postgres://postgres@127.0.0.1:5432/postgres")
# A bound on waiting for what the server does; never a figure the test checks.
PATIENCE = 30.0
OTHERS = 12


@dataclass
class Service:
    stack: Stack
    database_url: str
    redis_url: str

    @property
    def stream_port(self) -> int:
        return self.stack.stream_port

    def redis_connections(self) -> list[dict[str, str]]:
        """The Redis connections the uvicorn process holds (each is named kingscorner:<pid>)."""
        name = f"kingscorner:{self.stack.processes['stream'].pid}"
        clients: list[dict[str, str]] = redis.Redis.from_url(self.redis_url).client_list()  # type: ignore[assignment]
        return [client for client in clients if client.get("name") == name]


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        pytest.skip("needs Redis: set REDIS_URL")
    name = f"kingscorner_opens_{uuid.uuid4().hex[:12]}"
    database_url = database_create(SERVER_URL, name, fresh=True)
    stack = Stack(
        database_url=database_url,
        broker_url="memory://",
        cache_url=redis_url,
        extra_env={
            "CELERY_TASK_ALWAYS_EAGER": "true",
            "STREAMS_PER_PLAYER": "1000",
            "STREAMS_PER_ADDRESS": "1000",
            # The slow open waits on its lock until the test lets it go, not until a statement timeout.
            "DATABASE_STATEMENT_TIMEOUT": "0",
        },
    )
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=2)
        stack.start_stream()
        yield Service(stack=stack, database_url=database_url, redis_url=redis_url)
    finally:
        stack.close()
        database_drop(SERVER_URL, name)
        shutil.rmtree(stack.logs, ignore_errors=True)


def _player_at_a_table(service: Service, name: str) -> tuple[str, str]:
    status, player, _ = call(service.stack.port, "POST", "/api/v1/players", {"name": name})
    assert status == 201, player
    status, game, _ = call(service.stack.port, "POST", "/api/v1/games", {"opponents": 1}, player["token"])
    assert status == 201, game
    return str(player["token"]), str(game["id"])


def _rotated_with_a_replay_open(service: Service, token: str) -> str:
    """The player's new token, from a rotation with an Idempotency-Key: its first use ends the replay with
    a write to the player's rotation row (games/rotation_replay.py)."""
    connection = http.client.HTTPConnection("127.0.0.1", service.stack.port, timeout=PATIENCE)
    connection.request(
        "POST",
        "/api/v1/players/me/token",
        headers={"Authorization": f"Bearer {token}", "Idempotency-Key": str(uuid.uuid4())},
    )
    response = connection.getresponse()
    body = json.loads(response.read())
    connection.close()
    assert response.status == 200, body
    return str(body["token"])


def _stream(service: Service, game_id: str, token: str) -> EventStreamClient:
    return EventStreamClient(
        service.stream_port,
        f"/api/v1/games/{game_id}/stream",
        headers={"Authorization": f"Bearer {token}"},
        timeout=PATIENCE,
    )


def _person_stream(service: Service, token: str) -> EventStreamClient:
    return EventStreamClient(
        service.stream_port,
        "/api/v1/players/me/stream",
        headers={"Authorization": f"Bearer {token}"},
        timeout=PATIENCE,
    )


def _waiting_on_a_lock(database_url: str) -> int:
    with psycopg.connect(database_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        ).fetchone()
    return int(row[0]) if row else 0


def test_stream_opens_get_their_first_byte_while_another_opens_authentication_waits_on_a_lock(
    service: Service,
) -> None:
    token, game_id = _player_at_a_table(service, "Slow")
    new_token = _rotated_with_a_replay_open(service, token)
    others = [_player_at_a_table(service, f"Quick{index}") for index in range(OTHERS)]
    with psycopg.connect(service.database_url) as lock:
        # The slow open's authentication ends the rotation's replay with an UPDATE of this row: it waits.
        # (Its rotation is the only one in this module's database.)
        lock.execute("SELECT id FROM games_tokenrotation FOR UPDATE")
        slow: list[EventStreamClient] = []
        opener = threading.Thread(
            target=lambda: slow.append(_stream(service, game_id, new_token)), daemon=True
        )
        opener.start()
        deadline = time.monotonic() + PATIENCE
        while _waiting_on_a_lock(service.database_url) == 0:
            assert time.monotonic() < deadline, "the slow open never reached the lock"
            time.sleep(0.05)

        # Game streams and person streams alike.
        opened = [_stream(service, other_game, other_token) for other_token, other_game in others]
        opened += [_person_stream(service, other_token) for other_token, _ in others]
        try:
            assert [stream.status for stream in opened] == [200] * 2 * OTHERS
            assert all(stream.next(timeout=PATIENCE).retry is not None for stream in opened)
            assert not slow, "the slow open answered before its lock was let go"
            lock.rollback()
        finally:
            for stream in opened:
                stream.close()
    opener.join(timeout=PATIENCE)
    assert slow and slow[0].status == 200
    assert slow[0].next(timeout=PATIENCE).retry is not None
    slow[0].close()


def _connections_settle(
    service: Service, check: Callable[[list[dict[str, str]]], bool]
) -> list[dict[str, str]]:
    deadline = time.monotonic() + PATIENCE
    while True:
        connections = service.redis_connections()
        if check(connections) or time.monotonic() > deadline:
            return connections
        time.sleep(0.1)


def test_the_stream_server_holds_a_bounded_number_of_redis_connections_whatever_the_streams_open(
    service: Service,
) -> None:
    players = [_player_at_a_table(service, f"Many{index}") for index in range(10)]
    # The subscription, the event loop's one connection for its streams' commands (their leases, and the rate
    # limit's counts of their opens), and the pool's one for the synchronous requests the process served (the
    # health check that the test's stack waited on).
    bound = 3
    counts = {}
    for streams_each in (1, 8):
        opened = [_stream(service, game_id, token) for token, game_id in players for _ in range(streams_each)]
        opened += [_person_stream(service, token) for token, _ in players for _ in range(streams_each)]
        try:
            assert all(stream.status == 200 for stream in opened)
            assert all(stream.next(timeout=PATIENCE).retry is not None for stream in opened)
            connections = service.redis_connections()
            counts[len(opened)] = len(connections)
            assert any(connection["cmd"] == "psubscribe" for connection in connections), connections
        finally:
            for stream in opened:
                stream.close()
    assert all(count <= bound for count in counts.values()), counts
    assert len(set(counts.values())) == 1, counts

    # Once no stream is open the subscription is let go, and nothing a stream opened stays behind.
    after = _connections_settle(
        service, lambda connections: all(c["cmd"] != "psubscribe" for c in connections)
    )
    assert all(connection["cmd"] != "psubscribe" for connection in after), after
    assert len(after) < bound, after


def test_stream_opens_replace_the_database_connections_the_server_dropped(service: Service) -> None:
    players = [_player_at_a_table(service, f"Again{index}") for index in range(2 * READ_THREADS)]
    for token, game_id in players:
        stream = _stream(service, game_id, token)
        assert stream.status == 200
        stream.close()
    # Every connection the stream readers kept is ended by the server, as a restart or a failover would.
    with psycopg.connect(service.database_url, autocommit=True) as connection:
        ended = connection.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    assert ended is not None and ended[0] > 0
    opened = [_stream(service, game_id, token) for token, game_id in players]
    opened += [_person_stream(service, token) for token, _ in players]
    try:
        assert [stream.status for stream in opened] == [200] * 2 * len(players)
        assert all(stream.next(timeout=PATIENCE).retry is not None for stream in opened)
    finally:
        for stream in opened:
            stream.close()
