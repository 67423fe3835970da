"""The caps on open event streams (games/stream_leases.py): at most STREAMS_PER_PLAYER a player and
STREAMS_PER_ADDRESS a client address, counted as leases that a live stream renews and that expire when its
server stops renewing them; the next stream is refused with 429 `too_many_streams` and Retry-After."""

import asyncio
import time
from collections.abc import Callable, Iterator

import pytest
from django.test import override_settings

from games.stream_leases import StreamLease
from tests.support.games import Caller, new_caller
from tests.support.streams import EventStreamClient, LiveAsgiServer

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveAsgiServer]:
    live = LiveAsgiServer()
    live.start()
    yield live
    live.stop()


@pytest.fixture
def opened() -> Iterator[list[EventStreamClient]]:
    streams: list[EventStreamClient] = []
    yield streams
    for stream in streams:
        stream.close()


def _open(
    server: LiveAsgiServer, caller: Caller, game_id: str, opened: list[EventStreamClient]
) -> EventStreamClient:
    stream = EventStreamClient(
        server.port, f"/api/v1/games/{game_id}/stream", headers={"Authorization": f"Bearer {caller.token}"}
    )
    opened.append(stream)
    return stream


def _eventually(check: Callable[[], bool], seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


@override_settings(STREAMS_PER_PLAYER=3)
def test_a_player_opens_at_most_the_cap_and_the_next_is_429_too_many_streams_with_retry_after(
    server: LiveAsgiServer, transactional_db: None, opened: list[EventStreamClient]
) -> None:
    ada, grace = new_caller("Ada"), new_caller("Grace")
    game = ada.create_game(opponents=1)["id"]
    streams = [_open(server, ada, game, opened) for _ in range(3)]
    assert [stream.status for stream in streams] == [200, 200, 200]
    refused = _open(server, ada, game, opened)
    assert (refused.status, refused.body()["code"]) == (429, "too_many_streams")
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.headers["content-type"] == "application/problem+json"
    # Another player's streams are not counted against Ada's.
    assert _open(server, grace, grace.create_game(opponents=1)["id"], opened).status == 200
    # A stream that ends frees its slot.
    streams[0].close()
    assert _eventually(lambda: _open(server, ada, game, opened).status == 200)


@override_settings(STREAMS_PER_ADDRESS=2)
def test_an_address_opens_at_most_its_cap_whatever_players_it_uses(
    server: LiveAsgiServer, transactional_db: None, opened: list[EventStreamClient]
) -> None:
    callers = [new_caller(name) for name in ("Ada", "Grace", "Alan")]
    statuses = [
        _open(server, caller, caller.create_game(opponents=1)["id"], opened).status for caller in callers
    ]
    assert statuses == [200, 200, 429]
    assert opened[-1].body()["code"] == "too_many_streams"


@override_settings(STREAMS_PER_PLAYER=1, STREAM_HEARTBEAT_SECONDS=0.3)
def test_a_live_stream_renews_its_lease_and_keeps_its_slot(
    server: LiveAsgiServer, transactional_db: None, opened: list[EventStreamClient]
) -> None:
    ada = new_caller("Ada")
    game = ada.create_game(opponents=1)["id"]
    stream = _open(server, ada, game, opened)
    assert stream.status == 200
    # Past three lease lifetimes (0.9 s each), the stream still holds its slot.
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        stream.next(timeout=5)
    assert _open(server, ada, game, opened).status == 429


@override_settings(STREAMS_PER_PLAYER=1, STREAM_HEARTBEAT_SECONDS=0.3)
def test_a_slot_whose_server_died_is_freed_when_its_lease_expires(
    server: LiveAsgiServer, transactional_db: None, opened: list[EventStreamClient]
) -> None:
    ada = new_caller("Ada")
    game = ada.create_game(opponents=1)["id"]
    # A lease taken by a server that then died: never renewed, never released.
    asyncio.run(StreamLease(player_id=ada.player_id, address="127.0.0.1").take())
    assert _open(server, ada, game, opened).status == 429
    assert _eventually(lambda: _open(server, ada, game, opened).status == 200)
