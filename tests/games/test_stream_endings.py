"""A player's open streams end when their token is rotated, whichever token or ticket opened them and on
every server (two uvicorns here, woken through Redis when REDIS_URL is set, as deployed), and nothing more of
the game is sent on them."""

from collections.abc import Iterator

import pytest

from games.models import Game
from tests.support.games import Caller, new_caller
from tests.support.streams import EventStreamClient, LiveAsgiServer, StreamClosed

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def servers() -> Iterator[list[LiveAsgiServer]]:
    live = [LiveAsgiServer(), LiveAsgiServer()]
    for server in live:
        server.start()
    yield live
    for server in live:
        server.stop()


@pytest.fixture
def ada(transactional_db: None) -> Caller:
    return new_caller("Ada")


def _read_log(stream: EventStreamClient, game_id: str) -> None:
    assert stream.status == 200
    stream.events_until(int(Game.objects.get(id=game_id).event_seq))


def _ended_without_events(stream: EventStreamClient) -> bool:
    """Whether the stream ends (within the client's patience) with no event after what was read."""
    try:
        return all(message.event is None for message in stream.rest(timeout=10))
    except StreamClosed:
        return True


def test_rotating_the_token_ends_every_stream_of_the_player_on_every_server(
    servers: list[LiveAsgiServer], ada: Caller
) -> None:
    game = ada.create_game(opponents=1)["id"]
    ticket = ada.post(f"/api/v1/games/{game}/stream-tickets").json()["ticket"]
    path = f"/api/v1/games/{game}/stream"
    streams = [
        EventStreamClient(servers[0].port, path, headers={"Authorization": f"Bearer {ada.token}"}),
        EventStreamClient(servers[1].port, path, headers={"Authorization": f"Bearer {ada.token}"}),
        EventStreamClient(servers[1].port, f"{path}?ticket={ticket}"),
    ]
    try:
        for stream in streams:
            _read_log(stream, game)
        assert ada.post("/api/v1/players/me/token").status_code == 200
        assert all(_ended_without_events(stream) for stream in streams)
    finally:
        for stream in streams:
            stream.close()


def test_rotating_a_token_leaves_other_players_streams_open(
    servers: list[LiveAsgiServer], ada: Caller
) -> None:
    grace = new_caller("Grace")
    game = grace.create_game(opponents=1)["id"]
    stream = EventStreamClient(
        servers[0].port, f"/api/v1/games/{game}/stream", headers={"Authorization": f"Bearer {grace.token}"}
    )
    try:
        _read_log(stream, game)
        assert ada.post("/api/v1/players/me/token").status_code == 200
        view = grace.get(f"/api/v1/games/{game}").json()
        assert (
            grace.post(f"/api/v1/games/{game}/moves", {"moves": [view["legal_moves"][0]]}).status_code == 200
        )
        assert stream.next(timeout=10).event is not None
    finally:
        stream.close()
