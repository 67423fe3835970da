"""Start, join and leave of a waiting table serialise on the game's row, and each reads the seats as they are
once it holds the lock: every pair of them raced (tests/support/races.py, each on its own connection) gives
never a 500, never a started game with a person's seat nobody holds, and never a creator who is not seated
while someone is."""

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import Game, GameSeat
from tests.support.games import new_caller
from tests.support.races import race, split

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ROUNDS = 5


def _client(token: str) -> APIClient:
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def _table() -> dict[str, Any]:
    """A waiting table of four people's seats: Ada made it, Grace took a seat, two are free; Hedy and Joan
    hold the invitation."""
    ada, grace = new_caller("Ada"), new_caller("Grace")
    made = ada.create_game(seats=[{"kind": "person"}] * 4)
    assert grace.post(made["invitation"]["join"]).status_code == 200
    return {
        "id": made["id"],
        "url": made["invitation"]["join"],
        "ada": ada.token,
        "grace": grace.token,
        "hedy": new_caller("Hedy").token,
        "joan": new_caller("Joan").token,
    }


def _start(table: dict[str, Any]) -> int:
    return _client(table["ada"]).post(f"/api/v1/games/{table['id']}/start").status_code


def _join(who: str) -> Callable[[dict[str, Any]], int]:
    return lambda table: _client(table[who]).post(table["url"]).status_code


def _leave(who: str) -> Callable[[dict[str, Any]], int]:
    return lambda table: _client(table[who]).post(f"/api/v1/games/{table['id']}/leave").status_code


ACTIONS: dict[str, Callable[[dict[str, Any]], int]] = {
    "start": _start,
    "join": _join("hedy"),
    "join_other": _join("joan"),
    "leave": _leave("grace"),
    "creator_leaves": _leave("ada"),
}
PAIRS = [
    ("start", "join"),
    ("start", "leave"),
    ("start", "start"),
    ("join", "join_other"),
    ("join", "leave"),
    ("leave", "leave"),
    ("start", "creator_leaves"),
    ("join", "creator_leaves"),
    ("leave", "creator_leaves"),
]


def _check(table: dict[str, Any]) -> None:
    game = Game.objects.get(pk=table["id"])
    seats = list(GameSeat.objects.filter(game=game).order_by("seat"))
    # Started (dealt): not waiting, and not closed by its last person leaving.
    if game.status != Game.Status.WAITING and game.state:
        empty = [row.seat for row in seats if row.kind == GameSeat.Kind.PERSON and row.player_id is None]
        assert not empty, (game.status, empty)
    held = [row.player_id for row in seats if row.player_id is not None]
    assert len(held) == len(set(held)), held
    # The creator is seated while anyone is; a waiting table nobody is left at has closed.
    assert (game.player_id in held) == bool(held), (game.player_id, held)
    if not held:
        assert game.status == Game.Status.FINISHED and game.invitation_revoked_at is not None


def _each_once(table: dict[str, Any], actions: list[Callable[[dict[str, Any]], int]]) -> Callable[[], int]:
    """What each racer runs: the next of `actions` not taken yet, on `table`."""
    left = list(actions)

    def racer() -> int:
        return left.pop()(table)

    return racer


@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_a_pair_of_table_changes_raced_never_fails_and_never_starts_a_table_with_an_empty_persons_seat(
    first: str, second: str
) -> None:
    for _ in range(ROUNDS):
        table = _table()
        statuses, errors = split(race(2, _each_once(table, [ACTIONS[first], ACTIONS[second]])))
        assert not errors, errors
        assert all(status < 500 for status in statuses), statuses
        _check(table)
