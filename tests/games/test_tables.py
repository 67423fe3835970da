"""Tables with several people over HTTP: whole games played by two and three people with computers, each
response checked for cards its seat may not see; moves per seat, the next hand by anyone seated, leaving,
starting, the rematch, the turn clock's fields, and 404 for anyone without a seat."""

import importlib
import uuid
from typing import Any

import pytest
from django.apps import apps

from games.models import Game, GameEvent, GameMove, GameSeat
from tests.support.games import SEED, Caller, new_caller, shown, whole_turn
from tests.support.problems import assert_problem
from tests.support.tables import (
    PERSON,
    Table,
    check_events,
    check_view,
    computer,
    play_table,
    scan,
    seat_table,
)

pytestmark = pytest.mark.django_db


def _scan_logs(table: Table) -> None:
    """Every person's event log, page by page, and their hint when it is their turn."""
    for seat, caller in table.people.items():
        after = 0
        while True:
            response = caller.get(f"/api/v1/games/{table.id}/events?after={after}&limit=50")
            assert response.status_code == 200
            page = response.json()
            check_events(page["items"], seat)
            after = page["more_after"]
            if page["next"] is None:
                break


@pytest.mark.parametrize(
    "seats", [[PERSON, PERSON], [PERSON, computer("easy"), PERSON], [PERSON, PERSON, PERSON, PERSON]]
)
def test_a_table_with_another_person_takes_no_chosen_seed(seats: list[dict[str, str]]) -> None:
    """A deal is a public function of its seed: the creator who chose it would know every hand."""
    creator = new_caller()
    refused = creator.post("/api/v1/games", {"seats": seats, "seed": SEED})
    body = assert_problem(refused, 400, "invalid_request")
    assert "seed" in body["errors"]
    assert not Game.objects.exists()
    # Alone with computers, a seed deals as it always has.
    alone = creator.post("/api/v1/games", {"seats": [PERSON, computer("easy")], "seed": SEED})
    assert alone.status_code == 201, alone.content


def test_two_people_and_a_computer_play_a_game_of_several_hands_to_its_end() -> None:
    table = seat_table([PERSON, computer("normal"), PERSON], seed=SEED, target_score=15)
    assert set(table.people) == {0, 2}
    # Seat 2, who did not make the table, deals every next hand.
    views = play_table(table, dealer=2)
    assert {view["status"] for view in views.values()} == {"finished"}
    assert views[0]["winners"] == views[2]["winners"]
    assert views[0]["hand_number"] > 1
    deals = GameMove.objects.filter(game_id=table.id, move={"type": "deal"}).count()
    assert deals == views[0]["hand_number"]
    seats = sorted(
        GameMove.objects.filter(game_id=table.id).values_list("seat", flat=True).distinct(), key=str
    )
    assert {0, 1, 2} <= set(seats)
    _scan_logs(table)


def test_three_people_and_a_sharp_computer_play_a_hand_to_the_game_s_end() -> None:
    table = seat_table([PERSON, PERSON, computer("sharp"), PERSON], seed=SEED, target_score=None)
    start = table.view(1)
    assert start["status"] == "playing" and start["invitation"] is None
    assert [entry["kind"] for entry in start["seats"]] == ["person", "person", "computer", "person"]
    assert [entry["name"] for entry in start["seats"]] == [shown("Ada"), shown("Grace"), "Roy", shown("Joan")]
    views = play_table(table, dealer=3)
    assert all(view["seed"] == SEED for view in views.values())
    _scan_logs(table)


def test_every_response_a_seat_gets_is_checked_for_cards_it_may_not_see() -> None:
    """The scan itself fails on a view that shows another seat's hand or another seat's drawn card."""
    table = seat_table([PERSON, PERSON], seed=SEED)
    view = table.view(0)
    check_view(view)
    other = dict(view, your_seat=1, seats=[dict(entry, you=not entry["you"]) for entry in view["seats"]])
    with pytest.raises(AssertionError):
        check_view(other)
    draw = {"seq": 9, "version": 2, "type": "draw", "seat": 1, "card": "QD", "stock": 20}
    with pytest.raises(AssertionError):
        check_events([draw], 0)
    check_events([draw], 1)


def test_a_move_from_the_seat_whose_turn_it_is_not_is_refused() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED)
    view = table.view(1)
    assert view["current_seat"] == 0 and not view["is_your_turn"] and view["legal_moves"] == []
    refused = table.people[1].moves(view, [{"type": "end_turn"}])
    assert_problem(refused, 409, "not_your_turn")
    assert_problem(table.people[1].get(f"/api/v1/games/{table.id}/hint"), 409, "not_your_turn")
    assert Game.objects.get(id=table.id).version == view["version"]
    hint = table.people[0].get(f"/api/v1/games/{table.id}/hint")
    assert hint.status_code == 200
    assert table.people[0].moves(table.view(0), [{"type": "end_turn"}]).status_code == 200
    # The other person's turn now: the response names their draw for them only.
    mine = table.view(1)
    assert mine["is_your_turn"] and mine["current_seat"] == 1


def test_the_next_hand_is_dealt_by_a_person_who_did_not_make_the_table() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED, target_score=100)
    view = table.view(0)
    while view["status"] == "playing":
        mover = view["current_seat"]
        mine = table.view(mover)
        assert table.people[mover].moves(mine, whole_turn(mine)).status_code == 200
        view = table.view(0)
    assert view["status"] == "hand_over"
    dealt = table.people[1].post(f"/api/v1/games/{table.id}/hands", {"expected_version": view["version"]})
    assert dealt.status_code == 200, dealt.content
    assert dealt.json()["hand_number"] == 2 and dealt.json()["your_seat"] == 1


def test_a_person_without_a_seat_gets_404_for_everything_about_the_game() -> None:
    table = seat_table([PERSON, PERSON, PERSON], names=("Ada", "Grace", "Hedy", "Joan"))
    stranger = new_caller("Mallory")
    path = f"/api/v1/games/{table.id}"
    for response in (
        stranger.get(path),
        stranger.get(f"{path}/events"),
        stranger.get(f"{path}/hint"),
        stranger.post(f"{path}/moves", {"moves": [{"type": "end_turn"}]}),
        stranger.post(f"{path}/hands", {}),
        stranger.post(f"{path}/start"),
        stranger.post(f"{path}/leave"),
        stranger.post(f"{path}/rematch"),
        stranger.client.delete(f"{path}/invitation"),
    ):
        assert_problem(response, 404, "game_not_found")
    assert stranger.get("/api/v1/games").json()["items"] == []
    listed = table.people[1].get("/api/v1/games").json()["items"]
    assert [(game["id"], game["status"], game["your_seat"]) for game in listed] == [(table.id, "playing", 1)]


def test_the_creator_starts_a_waiting_table_with_computers_in_the_free_seats() -> None:
    creator = new_caller("Ada")
    creator.after_each = scan
    made = creator.create_game(seats=[PERSON, PERSON, PERSON], fill_level="sharp", seed=SEED)
    assert made["status"] == "waiting" and made["hand"] == [] and made["legal_moves"] == []
    guest = new_caller("Grace")
    guest.after_each = scan
    assert guest.post(made["invitation"]["join"]).json()["your_seat"] == 1
    assert_problem(guest.post(f"/api/v1/games/{made['id']}/start"), 403, "not_creator")
    assert_problem(guest.moves(made, [{"type": "end_turn"}]), 409, "game_not_started")
    started = creator.post(f"/api/v1/games/{made['id']}/start")
    assert started.status_code == 200, started.content
    view = started.json()
    assert view["status"] == "playing" and view["invitation"] is None
    assert [(entry["kind"], entry["level"]) for entry in view["seats"]] == [
        ("person", None),
        ("person", None),
        ("computer", "sharp"),
    ]
    types = [event["type"] for event in view["events"]]
    assert types[:2] == ["game_started", "deal"]
    assert_problem(creator.post(f"/api/v1/games/{made['id']}/start"), 409, "game_started")


def test_leaving_on_your_turn_has_a_normal_computer_play_it_at_once() -> None:
    table = seat_table([PERSON, PERSON, PERSON], seed=SEED)
    view = table.view(0)
    assert view["current_seat"] == 0
    left = table.people[0].post(f"/api/v1/games/{table.id}/leave")
    assert left.status_code == 204
    assert_problem(table.people[0].get(f"/api/v1/games/{table.id}"), 404, "game_not_found")
    after = table.people[1].get(f"/api/v1/games/{table.id}?since_version={view['version']}").json()
    assert after["version"] == view["version"] + 1
    assert after["seats"][0]["kind"] == "computer" and after["seats"][0]["level"] == "normal"
    # Millie, the first computer name not at the table.
    assert after["seats"][0]["name"] == "Millie"
    events = after["events"]
    assert events[0] == {
        "seq": events[0]["seq"],
        "version": after["version"],
        "type": "seat_left",
        "seat": 0,
        "name": shown("Ada"),
        "level": "normal",
        "computer": "Millie",
    }
    # The computer played seat 0's turn, and seat 1, a person, is to move.
    assert any(event["type"] == "end_turn" and event["seat"] == 0 for event in events)
    assert after["current_seat"] == 1 and after["is_your_turn"]
    # The one who left may not come back through the link of a started table.
    assert GameSeat.objects.filter(game_id=table.id, player__isnull=False).count() == 2


def test_leaving_when_it_is_not_your_turn_changes_only_the_seat() -> None:
    table = seat_table([PERSON, PERSON, PERSON], seed=SEED)
    before = table.view(0)
    assert table.people[2].post(f"/api/v1/games/{table.id}/leave").status_code == 204
    after = table.people[0].get(f"/api/v1/games/{table.id}?since_version={before['version']}").json()
    assert [event["type"] for event in after["events"]] == ["seat_left"]
    assert after["hand"] == before["hand"] and after["is_your_turn"]
    # When seat 1 ends its turn the computer in seat 2 plays up to seat 0's.
    assert table.people[0].moves(after, whole_turn(after) or [{"type": "end_turn"}]).status_code == 200
    mine = table.view(1)
    assert table.people[1].moves(mine, whole_turn(mine)).status_code == 200
    assert table.view(0)["current_seat"] == 0


def test_leaving_a_waiting_table_frees_the_seat_for_the_link() -> None:
    creator = new_caller("Ada")
    made = creator.create_game(seats=[PERSON, PERSON, PERSON])
    guest = new_caller("Grace")
    assert guest.post(made["invitation"]["join"]).status_code == 200
    assert guest.post(f"/api/v1/games/{made['id']}/leave").status_code == 204
    view = creator.get(f"/api/v1/games/{made['id']}?since_version=1").json()
    assert view["status"] == "waiting"
    assert [entry["name"] for entry in view["seats"]] == [shown("Ada"), None, None]
    assert [event["type"] for event in view["events"]] == ["seat_taken", "seat_left"]
    other = new_caller("Hedy")
    assert other.post(made["invitation"]["join"]).json()["your_seat"] == 1


def test_the_creator_leaving_a_waiting_table_passes_the_role_to_the_next_seated_person_who_may_start_it() -> (
    None
):
    creator = new_caller("Ada")
    made = creator.create_game(seats=[PERSON, PERSON, PERSON], seed=SEED)
    assert made["creator_seat"] == 0
    guest = new_caller("Grace")
    assert guest.post(made["invitation"]["join"]).json()["creator_seat"] == 0
    assert_problem(guest.post(f"/api/v1/games/{made['id']}/start"), 403, "not_creator")
    assert creator.post(f"/api/v1/games/{made['id']}/leave").status_code == 204
    view = guest.get(f"/api/v1/games/{made['id']}?since_version=2").json()
    assert view["status"] == "waiting" and view["invitation"] is not None
    assert view["creator_seat"] == 1 and view["your_seat"] == 1
    assert [(entry["kind"], entry["name"], entry["level"]) for entry in view["seats"]] == [
        ("computer", "Millie", "normal"),
        ("person", shown("Grace"), None),
        ("person", None, None),
    ]
    [left] = view["events"]
    assert (left["type"], left["seat"], left["name"], left["computer"]) == (
        "seat_left",
        0,
        shown("Ada"),
        "Millie",
    )
    assert_problem(creator.get(f"/api/v1/games/{made['id']}"), 404, "game_not_found")
    assert Game.objects.get(id=made["id"]).player_id == uuid.UUID(guest.player_id)
    # The new creator starts the table: a computer at the fill level takes the free seat.
    started = guest.post(f"/api/v1/games/{made['id']}/start")
    assert started.status_code == 200, started.content
    assert started.json()["status"] == "playing" and started.json()["creator_seat"] == 1
    assert [entry["kind"] for entry in started.json()["seats"]] == ["computer", "person", "computer"]


def test_the_creator_s_role_passes_round_the_table_to_the_next_seated_person_after_their_seat() -> None:
    ada, grace, hedy, joan = (new_caller(name) for name in ("Ada", "Grace", "Hedy", "Joan"))
    made = ada.create_game(seats=[PERSON] * 4, seed=SEED)
    path = f"/api/v1/games/{made['id']}"
    for guest in (grace, hedy):
        assert guest.post(made["invitation"]["join"]).status_code == 200
    # Grace (seat 1) leaves and her seat is free again; Ada leaves: the role passes over seat 1 to Hedy.
    assert grace.post(f"{path}/leave").status_code == 204
    assert ada.post(f"{path}/leave").status_code == 204
    assert hedy.get(path).json()["creator_seat"] == 2
    assert joan.post(made["invitation"]["join"]).json()["your_seat"] == 1
    # Hedy leaves: after seat 2 come seat 3 (free) and seat 0 (a computer), then Joan in seat 1.
    assert hedy.post(f"{path}/leave").status_code == 204
    view = joan.get(path).json()
    assert view["status"] == "waiting" and view["creator_seat"] == 1
    assert [entry["kind"] for entry in view["seats"]] == ["computer", "person", "computer", "person"]
    assert joan.client.delete(f"{path}/invitation").status_code == 204


def test_a_waiting_table_whose_last_person_leaves_closes() -> None:
    """Closed: it is over (finished, nothing dealt), its invitation is revoked, and nobody holds a seat at it,
    so it is a 404 for the one who left as for anyone, and its link a 404 invitation_not_found."""
    creator = new_caller("Ada")
    made = creator.create_game(seats=[PERSON, PERSON, computer("easy")], seed=SEED)
    path = f"/api/v1/games/{made['id']}"
    assert creator.post(f"{path}/leave").status_code == 204
    assert_problem(creator.get(path), 404, "game_not_found")
    assert_problem(creator.post(f"{path}/invitation"), 404, "game_not_found")
    assert_problem(new_caller("Grace").post(made["invitation"]["join"]), 404, "invitation_not_found")
    game = Game.objects.get(id=made["id"])
    assert game.status == Game.Status.FINISHED and game.finished_at is not None
    assert game.invitation_revoked_at is not None and game.state == {}
    assert not GameSeat.objects.filter(game=game, player__isnull=False).exists()
    assert creator.get("/api/v1/games").json()["items"] == []


def test_the_creator_leaving_a_started_table_passes_the_role_on_and_the_game_goes_on() -> None:
    table = seat_table([PERSON, PERSON, PERSON], seed=SEED)
    assert table.view(2)["creator_seat"] == 0
    assert table.people[0].post(f"/api/v1/games/{table.id}/leave").status_code == 204
    assert table.view(2)["creator_seat"] == 1 and table.view(2)["status"] == "playing"


def test_a_finished_table_plays_again_with_the_same_seats() -> None:
    table = seat_table([PERSON, computer("easy"), PERSON], seed=SEED, target_score=None, turn_seconds=60)
    play_table(table, dealer=2)
    finished = table.view(0)
    rematch = table.people[2].post(f"/api/v1/games/{table.id}/rematch")
    assert rematch.status_code == 201, rematch.content
    new = rematch.json()
    assert rematch["Location"].endswith(f"/api/v1/games/{new['id']}")
    assert new["id"] != table.id and new["your_seat"] == 2 and new["status"] == "playing"
    assert [(entry["kind"], entry["name"], entry["level"]) for entry in new["seats"]] == [
        (entry["kind"], entry["name"], entry["level"]) for entry in finished["seats"]
    ]
    assert new["turn_seconds"] == 60 and new["rules"] == finished["rules"]
    again = table.people[0].post(f"/api/v1/games/{table.id}/rematch")
    assert again.status_code == 200 and again.json()["id"] == new["id"] and again.json()["your_seat"] == 0
    assert table.view(0)["rematch"] == new["id"]
    assert Game.objects.get(id=new["id"]).seed != SEED
    assert_problem(table.people[0].post(f"/api/v1/games/{new['id']}/rematch"), 409, "game_not_over")
    # The new table's people move through it as through the first (its seed is random: the turn may even
    # go out, one first turn in forty).
    rematched = Table(id=new["id"], people=table.people)
    mover = rematched.view(0)["current_seat"]
    mine = rematched.view(mover)
    assert rematched.people[mover].moves(mine, whole_turn(mine)).status_code == 200
    # Someone who left the next game finds no rematch of theirs from the first (they are not at its table).
    assert table.people[2].post(f"/api/v1/games/{new['id']}/leave").status_code == 204
    assert_problem(table.people[2].post(f"/api/v1/games/{table.id}/rematch"), 404, "game_not_found")


def test_the_turn_clock_runs_while_a_person_is_to_move_and_keeps_its_deadline_within_the_turn() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED, turn_seconds=30)
    waiting = Game.objects.get(id=table.id)
    assert waiting.turn_seconds == 30
    view = table.view(0)
    assert view["turn_seconds"] == 30 and view["turn_deadline"] is not None
    deadline = Game.objects.get(id=table.id).turn_deadline
    plays = [move for move in whole_turn(view) if move["type"] != "end_turn"][:1]
    if plays:
        played = table.people[0].moves(view, plays)
        assert played.status_code == 200
        assert Game.objects.get(id=table.id).turn_deadline == deadline
        view = played.json()
    assert table.people[0].moves(view, [{"type": "end_turn"}]).status_code == 200
    assert Game.objects.get(id=table.id).turn_deadline is not None
    unclocked = seat_table([PERSON, PERSON], seed=SEED)
    assert unclocked.view(0)["turn_deadline"] is None
    assert Game.objects.get(id=unclocked.id).turn_deadline is None


def test_a_clocked_table_s_move_with_an_idempotency_key_is_stored_and_replayed() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED, turn_seconds=30)
    view = table.view(0)
    first = table.people[0].moves(view, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="once")
    assert first.status_code == 200, first.content
    again = table.people[0].moves(view, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="once")
    assert again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    assert first.json()["turn_deadline"] is not None


def test_a_clocked_table_s_deadline_is_cleared_when_the_hand_is_over() -> None:
    table = seat_table([PERSON, computer("easy")], seed=SEED, target_score=200, turn_seconds=30)
    view = table.view(0)
    while view["status"] == "playing":
        assert Game.objects.get(id=table.id).turn_deadline is not None
        response = table.people[0].moves(view, whole_turn(view))
        view = response.json()
    assert Game.objects.get(id=table.id).turn_deadline is None


def test_one_person_s_form_with_seats_is_dealt_at_once_and_the_old_form_gets_seats_too(
    caller: Caller,
) -> None:
    made = caller.create_game(seats=[PERSON, computer("sharp"), computer("easy")], seed=SEED)
    assert made["status"] == "playing" and made["invitation"] is None
    assert [(entry["name"], entry["level"]) for entry in made["seats"]] == [
        (shown("Ada"), None),
        ("Millie", "sharp"),
        ("Roy", "easy"),
    ]
    old = caller.create_game(opponents=2, level="easy", seed=SEED)
    assert [entry["you"] for entry in old["seats"]] == [True, False, False]
    assert [(entry["name"], entry["kind"]) for entry in old["players"]] == [
        (shown("Ada"), "person"),
        ("Millie", "computer"),
        ("Roy", "computer"),
    ]


@pytest.mark.parametrize(
    "body",
    [
        {"seats": [PERSON]},
        {"seats": [computer(), PERSON]},
        {"seats": [PERSON, {"kind": "person", "level": "easy"}]},
        {"seats": [PERSON, PERSON], "opponents": 1},
        {"seats": [PERSON, PERSON, PERSON, PERSON, PERSON]},
        {"seats": [PERSON, {"kind": "robot"}]},
        {"seats": [PERSON, PERSON], "turn_seconds": 5},
        {"seats": [PERSON, PERSON], "fill_level": "genius"},
    ],
)
def test_a_table_the_rules_do_not_allow_is_refused_and_nothing_is_made(caller: Caller, body: Any) -> None:
    assert_problem(caller.post("/api/v1/games", body), 400, "invalid_request")
    assert not Game.objects.exists()


def test_the_backfill_gives_every_existing_game_its_seats(caller: Caller) -> None:
    made = caller.create_game(opponents=2, levels=["easy", "sharp"], seed=SEED)
    GameSeat.objects.all().delete()
    migration = importlib.import_module("games.migrations.0008_backfill_seats")
    migration._backfill_seats(apps, None)
    rows = list(GameSeat.objects.filter(game_id=made["id"]).order_by("seat"))
    assert [(row.seat, row.kind, row.name, row.level, str(row.player_id)) for row in rows] == [
        (0, "person", "Ada", None, caller.player_id),
        (1, "computer", "Millie", "easy", "None"),
        (2, "computer", "Roy", "sharp", "None"),
    ]
    migration._backfill_seats(apps, None)
    assert GameSeat.objects.filter(game_id=made["id"]).count() == 3
    assert caller.get(f"/api/v1/games/{made['id']}").status_code == 200


def test_a_table_s_log_tells_who_sat_down_and_when_it_started() -> None:
    table = seat_table([PERSON, PERSON, computer("easy")], seed=SEED)
    events = list(GameEvent.objects.filter(game_id=table.id).order_by("seq").values_list("type", "data"))
    assert events[:3] == [
        ("seat_taken", {"seat": 0, "name": shown("Ada")}),
        ("seat_taken", {"seat": 1, "name": shown("Grace")}),
        (
            "game_started",
            {
                "seats": [
                    {"seat": 0, "kind": "person", "name": shown("Ada"), "level": None},
                    {"seat": 1, "kind": "person", "name": shown("Grace"), "level": None},
                    {"seat": 2, "kind": "computer", "name": "Roy", "level": "easy"},
                ]
            },
        ),
    ]
    assert events[3][0] == "deal"


def test_a_table_with_no_person_left_is_not_played_on() -> None:
    """The last person leaves on their turn: the computer that takes the seat does not play it, nor do the
    others play the hand out, for nobody is there to see it. The game stays where it was, the seat changed."""
    ada = new_caller("Ada")
    view = ada.create_game(opponents=2, seed=SEED)
    assert view["is_your_turn"]
    before = Game.objects.get(id=view["id"])
    moves_before = GameMove.objects.filter(game=before).count()
    assert ada.post(f"/api/v1/games/{view['id']}/leave").status_code == 204
    game = Game.objects.get(id=view["id"])
    assert game.version == before.version + 1
    logged = GameEvent.objects.filter(game=game, version=game.version)
    assert [event.type for event in logged] == ["seat_left"]
    assert GameMove.objects.filter(game=game).count() == moves_before
    assert game.state == before.state and game.status == Game.Status.PLAYING
    assert not GameSeat.objects.filter(game=game, kind=GameSeat.Kind.PERSON).exists()
