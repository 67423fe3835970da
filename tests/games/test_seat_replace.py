"""The abandonment rule of a table without a clock: `abandon_seconds` on POST games and in the view, the
turn's start it counts from, and POST games/{id}/seats/{seat}/replace, which hands the seat of a person who
has been to move that long to a computer at normal (refused clearly before the time is up, for your own seat,
a computer's, a clocked table, a game not in play). Races on PostgreSQL from real threads: a replace and the
absent person's move, leave or another replace give exactly one winner, never a 500."""

import logging
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import Game, GameSeat
from games.services import ABANDON_SECONDS_MAX, ABANDON_SECONDS_MIN
from tests.support.games import SEED, new_caller, whole_turn
from tests.support.problems import assert_problem
from tests.support.races import race, split
from tests.support.tables import PERSON, Table, computer, seat_table, turn_aged

DAY = 86400


def _replace(table: Table, by: int, seat: int) -> Any:
    return table.people[by].post(f"/api/v1/games/{table.id}/seats/{seat}/replace")


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.django_db
def test_a_table_without_a_clock_has_the_abandonment_rule_in_its_view_and_a_clocked_one_has_none() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED)
    view = table.view(1)
    assert view["abandon_seconds"] == DAY and view["turn_seconds"] is None
    assert view["current_seat"] == 0 and view["turn_started_at"] is not None
    assert _time(view["replaceable_at"]) == _time(view["turn_started_at"]) + timedelta(seconds=DAY)
    own = seat_table([PERSON, PERSON], seed=SEED, abandon_seconds=ABANDON_SECONDS_MIN).view(0)
    assert own["abandon_seconds"] == ABANDON_SECONDS_MIN
    clocked = seat_table([PERSON, PERSON], seed=SEED, turn_seconds=30).view(0)
    assert clocked["abandon_seconds"] is None and clocked["replaceable_at"] is None
    assert clocked["turn_started_at"] is not None and clocked["turn_deadline"] is not None
    # One person against computers: nobody could replace them.
    solo = new_caller("Solo").create_game(opponents=1, seed=SEED)
    assert solo["abandon_seconds"] == DAY and solo["replaceable_at"] is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    "options",
    [
        {"abandon_seconds": ABANDON_SECONDS_MIN - 1},
        {"abandon_seconds": ABANDON_SECONDS_MAX + 1},
        {"abandon_seconds": "3600"},
        {"abandon_seconds": None},
        {"abandon_seconds": 3600, "turn_seconds": 60},
    ],
)
def test_an_abandonment_rule_out_of_range_or_beside_a_clock_is_refused_and_nothing_is_made(
    options: dict[str, Any],
) -> None:
    caller = new_caller("Ada")
    body = assert_problem(
        caller.post("/api/v1/games", {"seats": [PERSON, PERSON], **options}), 400, "invalid_request"
    )
    assert "abandon_seconds" in body["errors"]
    assert not Game.objects.exists()


@pytest.mark.django_db
def test_the_turn_s_start_is_kept_within_the_turn_and_set_again_when_the_next_person_s_turn_begins() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED, target_score=100)
    view = table.view(0)
    began = view["turn_started_at"]
    plays = [move for move in whole_turn(view) if move["type"] != "end_turn"][:1]
    if plays:
        view = table.people[0].moves(view, plays).json()
        assert view["turn_started_at"] == began
    ended = table.people[0].moves(view, [{"type": "end_turn"}]).json()
    after = table.view(1)
    if ended["status"] == "playing":
        assert after["current_seat"] == 1 and after["turn_started_at"] != began
        assert after["replaceable_at"] is not None
    else:
        assert after["turn_started_at"] is None and after["replaceable_at"] is None


@pytest.mark.django_db
def test_before_the_time_is_up_a_replace_is_refused_with_when_it_may_be() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED)
    view = table.view(1)
    early = _replace(table, 1, 0)
    body = assert_problem(early, 409, "seat_not_abandoned")
    assert body["replaceable_at"] == view["replaceable_at"]
    assert 1 <= int(early["Retry-After"]) <= DAY
    # A person who is not to move holds nobody up: no time is named.
    turn_aged(table.id, DAY)
    other = assert_problem(_replace(table, 0, 1), 409, "seat_not_abandoned")
    assert other["replaceable_at"] is None
    assert Game.objects.get(id=table.id).version == view["version"]


@pytest.mark.django_db
def test_once_the_time_is_up_a_computer_takes_the_seat_and_plays_the_turn_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    table = seat_table([PERSON, PERSON, PERSON], seed=SEED)
    before = table.view(1)
    assert before["current_seat"] == 0 and before["creator_seat"] == 0
    turn_aged(table.id, DAY)
    with caplog.at_level(logging.INFO, logger="games.services.seats"):
        replaced = _replace(table, 2, 0)
    assert replaced.status_code == 200, replaced.content
    view = replaced.json()
    assert view["your_seat"] == 2 and replaced["ETag"] == f'"{view["version"]}"'
    first = view["events"][0]
    assert first == {
        "seq": first["seq"],
        "version": view["version"],
        "type": "seat_replaced",
        "seat": 0,
        "name": before["seats"][0]["name"],
        "level": "normal",
        "computer": "Millie",
        "by": 2,
    }
    assert any(event["type"] == "end_turn" and event["seat"] == 0 for event in view["events"])
    assert (view["seats"][0]["kind"], view["seats"][0]["level"]) == ("computer", "normal")
    # The creator was replaced: the role passed to the next seated person; the next person is to move.
    assert view["creator_seat"] == 1
    assert view["current_seat"] == 1 and view["replaceable_at"] is not None
    # The absent person is seated no more, and is told (the notice for their person stream).
    assert_problem(table.people[0].get(f"/api/v1/games/{table.id}"), 404, "game_not_found")
    assert [record.getMessage() for record in caplog.records if record.name == "games.services.seats"] == [
        f"game {table.id}: seat 0 handed to Millie for absent player {table.people[0].player_id}"
    ]
    seen = table.people[1].get(f"/api/v1/games/{table.id}?since_version={before['version']}")
    assert seen.json()["events"][0] == first
    # Replaced once, the seat is a computer's.
    assert_problem(_replace(table, 2, 0), 409, "seat_not_a_person")


@pytest.mark.django_db
def test_a_replace_is_refused_for_your_own_seat_a_computer_s_a_seat_the_table_lacks_and_a_stranger() -> None:
    table = seat_table([PERSON, computer("easy"), PERSON], seed=SEED)
    turn_aged(table.id, DAY)
    assert_problem(_replace(table, 2, 2), 422, "seat_is_yours")
    assert_problem(_replace(table, 2, 1), 409, "seat_not_a_person")
    assert_problem(_replace(table, 2, 3), 404, "seat_not_found")
    assert_problem(table.people[2].post(f"/api/v1/games/{table.id}/seats/-1/replace"), 404, "not_found")
    stranger = new_caller("Mallory")
    assert_problem(stranger.post(f"/api/v1/games/{table.id}/seats/0/replace"), 404, "game_not_found")
    assert GameSeat.objects.get(game_id=table.id, seat=0).kind == GameSeat.Kind.PERSON


@pytest.mark.django_db
def test_a_clocked_table_s_seats_are_not_replaced_the_clock_plays_an_absent_person_s_turns() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED, turn_seconds=30)
    assert_problem(_replace(table, 1, 0), 422, "table_has_clock")


@pytest.mark.django_db
def test_a_replace_is_refused_while_the_table_waits_and_once_the_hand_or_the_game_is_over() -> None:
    creator = new_caller("Ada")
    waiting = creator.create_game(seats=[PERSON, PERSON, PERSON])
    guest = new_caller("Grace")
    assert guest.post(waiting["invitation"]["join"]).status_code == 200
    assert_problem(guest.post(f"/api/v1/games/{waiting['id']}/seats/0/replace"), 409, "game_not_started")

    table = seat_table([PERSON, PERSON], seed=SEED, target_score=200)
    view = table.view(0)
    while view["status"] == "playing":
        mine = table.view(view["current_seat"])
        table.people[mine["your_seat"]].moves(mine, whole_turn(mine))
        view = table.view(0)
    assert view["status"] == "hand_over" and view["replaceable_at"] is None
    assert_problem(_replace(table, 0, 1), 409, "hand_over")
    Game.objects.filter(id=table.id).update(status=Game.Status.FINISHED)
    game = Game.objects.get(id=table.id)
    game.state = {**game.state, "status": "finished", "winners": [0]}
    game.save()
    assert_problem(_replace(table, 0, 1), 409, "game_over")


@pytest.mark.django_db
def test_a_rematch_keeps_the_table_s_abandonment_rule() -> None:
    table = seat_table([PERSON, computer("easy"), PERSON], seed=SEED, target_score=None, abandon_seconds=600)
    view = table.view(0)
    while view["status"] != "finished":
        mine = table.view(view["current_seat"])
        table.people[mine["your_seat"]].moves(mine, whole_turn(mine))
        view = table.view(0)
    rematch = table.people[0].post(f"/api/v1/games/{table.id}/rematch")
    assert rematch.status_code == 201 and rematch.json()["abandon_seconds"] == 600


# --- races -------------------------------------------------------------------------------------------------

ROUNDS = 4


def _client(token: str) -> APIClient:
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def _abandoned(seats: list[dict[str, str]]) -> Table:
    """A table whose seat 0 (Ada, its creator) has been to move for a day."""
    table = seat_table(seats, seed=SEED)
    assert table.view(0)["current_seat"] == 0
    turn_aged(table.id, DAY)
    return table


def _raced(*actions: Any) -> list[tuple[str, int, str | None]]:
    """Runs the actions at once, each on its own connection: (name, status, code) of each response."""
    left = list(actions)

    def racer() -> tuple[str, int, str | None]:
        name, send = left.pop()
        response = send()
        code = response.json().get("code") if response.status_code >= 400 else None
        return name, response.status_code, code

    outcomes, errors = split(race(len(actions), racer))
    assert errors == [], errors
    assert all(status < 500 for _, status, _ in outcomes), outcomes
    return outcomes


def _replace_by(table: Table, by: int) -> tuple[str, Any]:
    return f"replace_by_{by}", lambda: _client(table.people[by].token).post(
        f"/api/v1/games/{table.id}/seats/0/replace"
    )


def _end_turn(table: Table, version: int) -> tuple[str, Any]:
    """The absent person (seat 0) ends their turn at last."""
    return "move", lambda: _client(table.people[0].token).post(
        f"/api/v1/games/{table.id}/moves",
        {"moves": [{"type": "end_turn"}], "expected_version": version},
        format="json",
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_replace_raced_with_the_absent_person_s_move_applies_exactly_one() -> None:
    for _ in range(ROUNDS):
        table = _abandoned([PERSON, PERSON])
        version = table.view(0)["version"]
        outcomes = {
            name: (status, code)
            for name, status, code in _raced(_replace_by(table, 1), _end_turn(table, version))
        }
        seat = GameSeat.objects.get(game_id=table.id, seat=0)
        assert Game.objects.get(id=table.id).version == version + 1
        if outcomes["replace_by_1"][0] == 200:
            assert outcomes["move"] in ((409, "version_conflict"), (404, "game_not_found"))
            assert seat.kind == GameSeat.Kind.COMPUTER
        else:
            assert outcomes == {"move": (200, None), "replace_by_1": (409, "seat_not_abandoned")}
            assert str(seat.player_id) == table.people[0].player_id


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_replace_raced_with_the_absent_person_leaving_applies_exactly_one() -> None:
    for _ in range(ROUNDS):
        table = _abandoned([PERSON, PERSON])
        leave = (
            "leave",
            lambda table=table: _client(table.people[0].token).post(f"/api/v1/games/{table.id}/leave"),
        )
        outcomes = {name: (status, code) for name, status, code in _raced(_replace_by(table, 1), leave)}
        assert outcomes in (
            {"replace_by_1": (200, None), "leave": (404, "game_not_found")},
            {"leave": (204, None), "replace_by_1": (409, "seat_not_a_person")},
        ), outcomes
        assert GameSeat.objects.get(game_id=table.id, seat=0).kind == GameSeat.Kind.COMPUTER


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_replaces_of_one_seat_raced_apply_once() -> None:
    for _ in range(ROUNDS):
        table = _abandoned([PERSON, PERSON, PERSON])
        version = table.view(1)["version"]
        outcomes = _raced(_replace_by(table, 1), _replace_by(table, 2))
        assert Counter((status, code) for _, status, code in outcomes) == Counter(
            {(200, None): 1, (409, "seat_not_a_person"): 1}
        )
        game = Game.objects.get(id=table.id)
        assert game.version > version
        assert GameSeat.objects.filter(game=game, kind=GameSeat.Kind.PERSON).count() == 2
