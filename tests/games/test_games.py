"""The games endpoints one by one: creating, listing and reading games, moves and their errors, versions and
If-Match, idempotent retries, new hands, the event log, hints, analysis, rate limits and the hooks."""

import base64
import json
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from daily.errors import HintsRefusedInRankedAttempt
from games import hooks, selectors, services, tasks
from games.engine import DECK, PILES, MoveJson, Rules, State, play_refusal
from games.engine.players import best_turn, threat_of
from games.models import Game, GameEvent, GameMove, IdempotentRequest
from tests.games.conftest import SEED, Caller, new_caller, play_to_the_end, whole_turn
from tests.support.problems import assert_problem

# A deal whose first turn sharp, reading the others' hand sizes, plays otherwise than at the fixed threat a
# position without hand sizes is read with (what `whole_turn` computes).
SHARP_READS_THE_TABLE_SEED = f"{3:064x}"


def sharps_turn(view: dict[str, Any]) -> list[MoveJson]:
    """The rest of the turn as sharp's search plays it from seat 0, reading the hand sizes as a computer
    player in that seat does."""
    state = State.from_json(Game.objects.get(id=view["id"]).state)
    threat = threat_of([len(hand) for hand in state.hands], 0)
    return [move.to_json() for move in best_turn(state.rules, state.hands[0], state.piles, threat=threat)]


def a_play(view: dict[str, Any]) -> dict[str, Any]:
    return next(move for move in view["legal_moves"] if move["type"] == "play")


def an_illegal_play(view: dict[str, Any]) -> dict[str, Any]:
    rules = Rules.from_json(view["rules"])
    piles = view["table"]["piles"]
    for card in view["hand"]:
        for to in PILES:
            refusal = play_refusal(rules, piles, card, to)
            if refusal is not None and refusal[0] == "does_not_fit":
                return {"type": "play", "card": card, "to": to}
    raise AssertionError("every card fits everywhere")


def game_with_a_play(caller: Caller, **body: Any) -> dict[str, Any]:
    for index in range(50):
        view = caller.create_game(seed=f"{index:064x}", **body)
        if any(move["type"] == "play" for move in view["legal_moves"]):
            return view
    raise AssertionError("no deal with a play")


# --- creating -----------------------------------------------------------------------------------------------


def test_a_new_game_has_defaults_and_deals_with_the_draw_already_made(caller: Caller) -> None:
    response = caller.post("/api/v1/games", {})
    assert response.status_code == 201
    view = response.json()
    assert response["Location"].endswith(f"/api/v1/games/{view['id']}")
    assert response["ETag"] == '"1"'
    assert view["version"] == 1 and view["status"] == "playing" and view["target_score"] == 25
    assert view["rules"]["preset"] == "classic" and view["rules"]["layout_king"] == "replace"
    assert [(p["name"], p["kind"], p["level"]) for p in view["players"]] == [
        ("Ada", "human", None),
        ("Millie", "computer", "normal"),
        ("Roy", "computer", "normal"),
        ("Bess", "computer", "normal"),
    ]
    assert view["your_seat"] == 0 and view["current_seat"] == 0 and view["is_your_turn"]
    assert len(view["hand"]) == 8 and view["players"][0]["hand_count"] == 8
    assert set(view["table"]["piles"]) == set(PILES)
    assert view["legal_moves"][-1] == {"type": "end_turn"}
    assert [event["type"] for event in view["events"]] == ["deal", "turn_start", "draw"]
    assert view["events"][-1]["card"] in view["hand"]
    assert view["seed"] is None and view["winners"] is None and view["hand_result"] is None


def test_options_of_a_new_game_are_honoured(caller: Caller) -> None:
    view = caller.create_game(
        opponents=2,
        levels=["easy", "hard"],
        rules={"preset": "casual", "draw": "until_playable"},
        target_score=None,
    )
    assert [p["level"] for p in view["players"][1:]] == ["easy", "sharp"]
    assert view["rules"]["preset"] == "casual" and view["rules"]["draw"] == "until_playable"
    assert view["target_score"] is None and len(view["players"]) == 3


def test_the_same_seed_deals_the_same_cards(caller: Caller) -> None:
    first, second = caller.create_game(seed=SEED), caller.create_game(seed=SEED.upper())
    assert first["hand"] == second["hand"] and first["table"] == second["table"]
    assert Game.objects.get(id=first["id"]).seed == SEED


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"opponents": 4}, "invalid_request"),
        ({"opponents": 0}, "invalid_request"),
        ({"level": "expert"}, "invalid_request"),
        ({"level": "easy", "levels": ["easy"]}, "invalid_request"),
        ({"opponents": 2, "levels": ["easy"]}, "invalid_request"),
        ({"levels": []}, "invalid_request"),
        ({"target_score": 0}, "invalid_request"),
        ({"target_score": "many"}, "invalid_request"),
        ({"target_score": "25"}, "invalid_request"),
        ({"target_score": 501}, "invalid_request"),
        ({"target_score": 2**31 - 1}, "invalid_request"),
        ({"target_score": 2**63}, "invalid_request"),
        ({"opponents": "2"}, "invalid_request"),
        ({"seed": "ab"}, "invalid_request"),
        ({"seed": "zz" * 32}, "invalid_request"),
        ({"colour": "red"}, "invalid_request"),
        ({"rules": "chess"}, "unknown_rule_set"),
        ({"rules": {"preset": "classic", "jokers": True}}, "unknown_rule_option"),
        ({"rules": {"draw": "three"}}, "invalid_rule_value"),
        ({"rules": {"draw": "until_playable", "draw_timing": "end"}}, "incompatible_rules"),
        ({"rules": 7}, "invalid_rules"),
    ],
)
def test_a_game_that_cannot_be_made_is_a_400_and_nothing_is_stored(
    caller: Caller, body: dict[str, Any], code: str
) -> None:
    assert_problem(caller.post("/api/v1/games", body), 400, code)
    assert not Game.objects.exists()


def test_the_largest_target_score_is_500(caller: Caller) -> None:
    view = caller.create_game(target_score=500)
    assert view["target_score"] == Game.objects.get(id=view["id"]).target_score == 500


def test_a_body_that_is_not_an_object_is_a_400(caller: Caller) -> None:
    assert_problem(caller.post("/api/v1/games", [1, 2]), 400, "invalid_request")


def test_an_oversized_body_is_a_413(caller: Caller) -> None:
    response = caller.post("/api/v1/games", {"padding": "x" * (settings.MAX_BODY_BYTES + 1)})
    assert_problem(response, 413, "body_too_large")


@pytest.mark.django_db
def test_games_need_a_token() -> None:
    client = APIClient()
    assert_problem(client.post("/api/v1/games", {}, format="json"), 401, "not_authenticated")
    assert_problem(client.get("/api/v1/games"), 401, "not_authenticated")


# --- reading ------------------------------------------------------------------------------------------------


def test_a_game_can_be_read_again_with_its_events_since_a_version(caller: Caller) -> None:
    view = caller.create_game(seed=SEED)
    response = caller.get(f"/api/v1/games/{view['id']}")
    assert response.status_code == 200 and response["ETag"] == '"1"'
    again = response.json()
    assert again["events"] == [] and again["hand"] == view["hand"]
    since = caller.get(f"/api/v1/games/{view['id']}?since_version=0").json()
    assert since["events"] == view["events"]
    assert_problem(caller.get(f"/api/v1/games/{view['id']}?since_version=-1"), 400, "invalid_request")


def test_since_version_shows_a_bounded_page_of_events_and_where_the_rest_continue(
    caller: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = caller.create_game(seed=SEED)
    view = caller.post(f"/api/v1/games/{view['id']}/moves", {"moves": [{"type": "end_turn"}]}).json()
    everything = caller.get(f"/api/v1/games/{view['id']}/events").json()["events"]
    assert len(everything) > 5
    monkeypatch.setattr(selectors, "EVENTS_PAGE_MAX", 5)
    page = caller.get(f"/api/v1/games/{view['id']}?since_version=0").json()
    assert page["events"] == everything[:5] and page["more_events_after"] == everything[4]["seq"]
    rest = caller.get(f"/api/v1/games/{view['id']}/events?after={page['more_events_after']}&limit=1000")
    assert page["events"] + rest.json()["events"] == everything
    monkeypatch.setattr(selectors, "EVENTS_PAGE_MAX", 1000)
    whole = caller.get(f"/api/v1/games/{view['id']}?since_version=0").json()
    assert whole["events"] == everything and whole["more_events_after"] is None


def test_someone_elses_game_is_a_404(caller: Caller) -> None:
    view = caller.create_game()
    other = new_caller("Eve")
    for response in [
        other.get(f"/api/v1/games/{view['id']}"),
        other.moves(view, [{"type": "end_turn"}]),
        other.post(f"/api/v1/games/{view['id']}/hands"),
        other.get(f"/api/v1/games/{view['id']}/events"),
        other.get(f"/api/v1/games/{view['id']}/hint"),
    ]:
        assert_problem(response, 404, "game_not_found")
    assert_problem(caller.get("/api/v1/games/00000000-0000-0000-0000-000000000000"), 404, "game_not_found")
    # A path that is no game id is no URL of the API at all.
    assert_problem(caller.get("/api/v1/games/not-a-uuid"), 404, "not_found")


def test_the_list_is_the_callers_games_newest_first_paginated_and_filtered(caller: Caller) -> None:
    ids = [caller.create_game(opponents=1, target_score=None)["id"] for _ in range(3)]
    new_caller("Eve").create_game()
    Game.objects.filter(id=ids[0]).update(status="finished")
    first = caller.get("/api/v1/games?limit=2").json()
    assert [game["id"] for game in first["results"]] == [ids[2], ids[1]]
    assert "hand" not in first["results"][0]
    second = caller.client.get(first["next"]).json()
    assert [game["id"] for game in second["results"]] == [ids[0]] and second["next"] is None
    finished = caller.get("/api/v1/games?status=finished").json()
    assert [game["id"] for game in finished["results"]] == [ids[0]]
    assert_problem(caller.get("/api/v1/games?status=paused"), 400, "invalid_status")


@pytest.mark.parametrize("position", ["", "garbage", "9999-99-99", "9" * 100])
def test_a_cursor_the_api_did_not_give_out_is_a_400(caller: Caller, position: str) -> None:
    caller.create_game()
    assert_problem(caller.get("/api/v1/games?cursor=not-a-cursor"), 400, "invalid_cursor")
    forged = quote(base64.b64encode(f"p={position}".encode()).decode())
    assert_problem(caller.get(f"/api/v1/games?cursor={forged}"), 400, "invalid_cursor")


# --- moves --------------------------------------------------------------------------------------------------


def test_a_play_is_applied_and_raises_the_version(caller: Caller) -> None:
    view = game_with_a_play(caller)
    move = a_play(view)
    response = caller.moves(view, [move])
    assert response.status_code == 200 and response["ETag"] == '"2"'
    after = response.json()
    assert after["version"] == 2
    assert move["card"] not in after["hand"] and after["table"]["piles"][move["to"]][-1] == move["card"]
    assert [e["type"] for e in after["events"]] == ["play"] and after["events"][0]["version"] == 2
    logged = GameMove.objects.filter(game_id=view["id"]).order_by("seq")
    assert [m.move for m in logged] == [{"type": "deal"}, move]


def test_a_play_without_to_goes_to_sharps_spot(caller: Caller) -> None:
    view = game_with_a_play(caller)
    card = a_play(view)["card"]
    after = caller.moves(view, [{"type": "play", "card": card.lower()}]).json()
    played = after["events"][0]
    assert played["card"] == card and after["table"]["piles"][played["to"]][-1] == card


def test_a_play_without_to_goes_where_sharp_in_the_players_seat_plays_it(caller: Caller) -> None:
    view = caller.create_game(seed=SHARP_READS_THE_TABLE_SEED)
    first = next(move for move in sharps_turn(view) if move["type"] == "play")
    after = caller.moves(view, [{"type": "play", "card": first["card"]}]).json()
    assert after["events"][0]["to"] == first["to"]


def test_end_turn_runs_the_computer_turns_and_returns_what_they_did(caller: Caller) -> None:
    view = caller.create_game(seed=SEED)
    after = caller.moves(view, [{"type": "end_turn"}]).json()
    assert after["is_your_turn"] and after["version"] == 2
    seats = {event["seat"] for event in after["events"] if event["type"] == "end_turn"}
    assert seats == {0, 1, 2, 3}
    other_draws = [e for e in after["events"] if e["type"] == "draw" and e["seat"] != 0]
    assert other_draws and all("card" not in e for e in other_draws)
    own_draw = after["events"][-1]
    assert own_draw["type"] == "draw" and own_draw["seat"] == 0 and own_draw["card"] in after["hand"]


def test_an_illegal_move_is_a_422_with_the_engines_reason_and_nothing_changes(caller: Caller) -> None:
    view = game_with_a_play(caller)
    good, bad = a_play(view), an_illegal_play(view)
    body = assert_problem(caller.moves(view, [good, bad]), 422, "does_not_fit")
    assert body["move_index"] == 1
    game = Game.objects.get(id=view["id"])
    assert game.version == 1 and GameMove.objects.filter(game=game).count() == 1
    missing = next(card for card in DECK if card not in view["hand"] and card not in str(view["table"]))
    body = assert_problem(
        caller.moves(view, [{"type": "play", "card": missing, "to": "N"}]), 422, "card_not_in_hand"
    )
    assert body["move_index"] == 0


def test_a_play_without_to_that_fits_nowhere_is_a_422(caller: Caller) -> None:
    view = caller.create_game(seed=SEED)
    state = State.from_json(Game.objects.get(id=view["id"]).state)
    rules = Rules.from_json(view["rules"])
    stuck = [c for c in view["hand"] if all(play_refusal(rules, state.piles, c, to) for to in PILES)]
    if not stuck:
        pytest.skip("every card of this deal fits somewhere")
    assert_problem(caller.moves(view, [{"type": "play", "card": stuck[0]}]), 422, "does_not_fit")


def test_moves_once_the_game_is_over_are_a_409_as_on_every_endpoint(caller: Caller) -> None:
    view = caller.create_game(seed=SEED, target_score=None)
    view = play_to_the_end(caller, view)
    assert_problem(caller.moves(view, [{"type": "end_turn"}]), 409, "game_over")
    assert_problem(caller.post(f"/api/v1/games/{view['id']}/hands"), 409, "game_over")
    assert_problem(caller.get(f"/api/v1/games/{view['id']}/hint"), 409, "game_over")


def test_moves_and_hints_between_hands_are_a_409_hand_over(caller: Caller) -> None:
    view = caller.create_game(seed=SEED, opponents=1, target_score=200)
    while view["status"] == "playing":
        view = caller.moves(view, whole_turn(view)).json()
    assert_problem(caller.moves(view, [{"type": "end_turn"}]), 409, "hand_over")
    assert_problem(caller.get(f"/api/v1/games/{view['id']}/hint"), 409, "hand_over")


@pytest.mark.parametrize(
    ("move", "code"),
    [
        ({"type": "play", "card": "ZZ", "to": "N"}, "invalid_card"),
        ({"type": "play", "card": 12, "to": "N"}, "invalid_card"),
        ({"type": "play", "card": "QD", "to": "X"}, "unknown_pile"),
        ({"type": "jump"}, "invalid_move"),
        ({"type": "end_turn", "extra": 1}, "invalid_move"),
        ("end_turn", "invalid_move"),
        ({"type": []}, "invalid_move"),
        ({"type": {"play": 1}}, "invalid_move"),
    ],
)
def test_a_malformed_move_is_a_400_naming_its_index(caller: Caller, move: Any, code: str) -> None:
    view = caller.create_game()
    body = assert_problem(caller.moves(view, [{"type": "end_turn"}, move]), 400, code)
    assert body["move_index"] == 1
    assert Game.objects.get(id=view["id"]).version == 1


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"moves": []},
        {"moves": "end_turn"},
        {"moves": [], "expected_version": "x"},
        {"moves": [], "x": 1},
        {"moves": [{"type": "end_turn"}], "expected_version": "1"},
        {"moves": [{"type": "end_turn"}], "expected_version": True},
    ],
)
def test_a_malformed_moves_body_is_a_400(caller: Caller, body: dict[str, Any]) -> None:
    view = caller.create_game()
    assert_problem(caller.post(f"/api/v1/games/{view['id']}/moves", body), 400, "invalid_request")
    assert Game.objects.get(id=view["id"]).version == 1


def test_more_than_200_moves_is_a_413(caller: Caller) -> None:
    view = caller.create_game()
    response = caller.moves(view, [{"type": "end_turn"}] * 201)
    assert_problem(response, 413, "too_many_moves")
    assert Game.objects.get(id=view["id"]).version == 1


def test_a_stale_version_is_a_409_with_the_current_view(caller: Caller) -> None:
    view = caller.create_game(seed=SEED)
    assert caller.moves(view, [{"type": "end_turn"}]).status_code == 200
    response = caller.moves(view, [{"type": "end_turn"}])
    body = assert_problem(response, 409, "version_conflict")
    assert body["current"]["version"] == 2 and response["ETag"] == '"2"'  # type: ignore[index]


@pytest.mark.parametrize(("header", "status"), [('"1"', 200), ('W/"1"', 200), ("1", 200), ('"7"', 409)])
def test_if_match_guards_the_version_like_expected_version(caller: Caller, header: str, status: int) -> None:
    view = caller.create_game()
    response = caller.post(
        f"/api/v1/games/{view['id']}/moves", {"moves": [{"type": "end_turn"}]}, HTTP_IF_MATCH=header
    )
    assert response.status_code == status


def test_if_match_that_is_not_a_version_or_disagrees_with_the_body_is_a_400(caller: Caller) -> None:
    view = caller.create_game()
    path = f"/api/v1/games/{view['id']}/moves"
    assert_problem(
        caller.post(path, {"moves": [{"type": "end_turn"}]}, HTTP_IF_MATCH="v1"), 400, "invalid_if_match"
    )
    body = {"moves": [{"type": "end_turn"}], "expected_version": 1}
    assert_problem(caller.post(path, body, HTTP_IF_MATCH='"2"'), 400, "version_mismatch")


def test_if_match_star_or_empty_guards_nothing(caller: Caller) -> None:
    for if_match in ("*", ""):
        view = caller.create_game()
        path = f"/api/v1/games/{view['id']}/moves"
        assert caller.post(path, {"moves": [{"type": "end_turn"}]}, HTTP_IF_MATCH=if_match).status_code == 200


def test_json_nested_past_the_recursion_limit_is_a_400_not_a_500(caller: Caller) -> None:
    body = "[" * 20_000 + "]" * 20_000
    response = caller.client.post("/api/v1/games", data=body, content_type="application/json")
    assert_problem(response, 400, "json_too_deep")


@pytest.mark.parametrize("value", ["TRUE", "true", 1])
def test_a_boolean_rule_option_sent_as_anything_but_json_true_or_false_is_refused(
    caller: Caller, value: object
) -> None:
    response = caller.post("/api/v1/games", {"rules": {"king_pile_to_corner": value}})
    assert_problem(response, 400, "invalid_rule_value")


def test_a_move_nested_past_the_recursion_limit_is_a_400_not_a_500(caller: Caller) -> None:
    # The review's 500: about 933 levels inside a move passed the parser and failed in DRF's JSONField.
    view = caller.create_game()
    card = "[" * 1_000 + "]" * 1_000
    body = '{"moves": [{"type": "play", "card": ' + card + ', "to": "N"}]}'
    response = caller.client.post(
        f"/api/v1/games/{view['id']}/moves", data=body, content_type="application/json"
    )
    assert_problem(response, 400, "json_too_deep")


def test_json_nested_32_deep_is_read_and_33_deep_is_refused(caller: Caller) -> None:
    def nested(depth: int) -> str:
        # The body is one level; `rules` holds the rest.
        return '{"rules": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"

    assert (
        caller.client.post("/api/v1/games", data=nested(32), content_type="application/json").json()["code"]
        == "invalid_rules"
    )
    response = caller.client.post("/api/v1/games", data=nested(33), content_type="application/json")
    assert_problem(response, 400, "json_too_deep")


def test_without_a_version_the_moves_apply_to_the_current_game(caller: Caller) -> None:
    view = caller.create_game()
    response = caller.post(f"/api/v1/games/{view['id']}/moves", {"moves": [{"type": "end_turn"}]})
    assert response.status_code == 200 and response.json()["version"] == 2


# --- idempotency --------------------------------------------------------------------------------------------


def test_a_retry_with_the_same_idempotency_key_returns_the_first_response_without_applying_again(
    caller: Caller,
) -> None:
    view = caller.create_game(seed=SEED)
    first = caller.moves(view, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="turn-1")
    retry = caller.moves(view, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="turn-1")
    assert first.status_code == retry.status_code == 200
    assert retry.json() == first.json() and retry["Idempotent-Replayed"] == "true"
    game = Game.objects.get(id=view["id"])
    assert game.version == 2 and IdempotentRequest.objects.count() == 1
    assert GameMove.objects.filter(game=game, seat=0).count() == 1


def test_the_same_idempotency_key_for_another_request_is_a_422(caller: Caller) -> None:
    view = game_with_a_play(caller)
    caller.moves(view, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="k")
    assert_problem(
        caller.moves(view, [a_play(view)], HTTP_IDEMPOTENCY_KEY="k"), 422, "idempotency_key_reused"
    )
    assert_problem(
        caller.moves(view, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="x" * 256),
        400,
        "invalid_idempotency_key",
    )


def test_a_refused_request_is_not_remembered_under_its_key(caller: Caller) -> None:
    view = game_with_a_play(caller)
    assert_problem(caller.moves(view, [an_illegal_play(view)], HTTP_IDEMPOTENCY_KEY="k"), 422, "does_not_fit")
    assert not IdempotentRequest.objects.exists()


def test_a_key_stored_meanwhile_by_a_request_on_another_game_refuses_this_one_whole(
    caller: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = caller.create_game(), caller.create_game()
    assert caller.moves(first, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="k").status_code == 200
    # The other request's row was not yet committed when this one looked for the key.
    monkeypatch.setattr(services, "_replay", lambda **_: None)
    response = caller.moves(second, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="k")
    assert_problem(response, 422, "idempotency_key_reused")
    game = Game.objects.get(id=second["id"])
    assert game.version == 1 and not GameMove.objects.filter(game=game, seat=0).exists()


def test_idempotency_keys_belong_to_one_player(caller: Caller) -> None:
    view = caller.create_game()
    other = new_caller("Eve")
    theirs = other.create_game()
    assert caller.moves(view, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="k").status_code == 200
    assert other.moves(theirs, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="k").status_code == 200


def _age(keys: Any, hours: float) -> None:
    keys.update(created_at=timezone.now() - timedelta(hours=hours))


def test_an_idempotency_key_older_than_24_hours_is_not_honoured(caller: Caller) -> None:
    view = caller.create_game(seed=SEED)
    path, body = f"/api/v1/games/{view['id']}/moves", {"moves": [{"type": "end_turn"}]}
    assert caller.post(path, body, HTTP_IDEMPOTENCY_KEY="k").status_code == 200
    _age(IdempotentRequest.objects.all(), 24.5)
    again = caller.post(path, body, HTTP_IDEMPOTENCY_KEY="k")
    # Applied again, as a new request: the first response is not replayed.
    assert again.status_code == 200 and "Idempotent-Replayed" not in again
    assert again.json()["version"] == 3 and IdempotentRequest.objects.count() == 1


def test_the_beat_job_deletes_the_idempotency_keys_older_than_24_hours(caller: Caller) -> None:
    view = caller.create_game(seed=SEED)
    path, body = f"/api/v1/games/{view['id']}/moves", {"moves": [{"type": "end_turn"}]}
    for key in ("old", "new"):
        assert caller.post(path, body, HTTP_IDEMPOTENCY_KEY=key).status_code == 200
    _age(IdempotentRequest.objects.filter(key="old"), 25)
    _age(IdempotentRequest.objects.filter(key="new"), 23)
    assert tasks.idempotency_keys_expire.delay().get() == 1
    assert list(IdempotentRequest.objects.values_list("key", flat=True)) == ["new"]
    entry = settings.CELERY_BEAT_SCHEDULE["idempotency-keys-expire"]
    assert entry["task"] == "games.tasks.idempotency_keys_expire"
    assert settings.IDEMPOTENCY_KEY_TTL == timedelta(hours=24)


# --- hands --------------------------------------------------------------------------------------------------


def test_the_next_hand_is_dealt_only_when_a_hand_is_over(caller: Caller) -> None:
    view = caller.create_game(seed=SEED, opponents=1, target_score=200)
    assert_problem(caller.post(f"/api/v1/games/{view['id']}/hands"), 409, "hand_in_progress")
    while view["status"] == "playing":
        view = caller.moves(view, whole_turn(view)).json()
    assert view["status"] == "hand_over"
    result = view["hand_result"]
    assert result["hand_number"] == 1 and len(result["hands"]) == 2 and len(result["penalties"]) == 2
    assert view["seed"] is None and view["legal_moves"] == []
    stale = view["version"] - 1
    assert_problem(
        caller.post(f"/api/v1/games/{view['id']}/hands", {"expected_version": stale}), 409, "version_conflict"
    )
    response = caller.post(f"/api/v1/games/{view['id']}/hands", {"expected_version": view["version"]})
    assert response.status_code == 200
    dealt = response.json()
    assert dealt["hand_number"] == 2 and dealt["dealer"] == 0 and dealt["status"] == "playing"
    assert dealt["events"][0]["type"] == "deal" and dealt["hand_result"] is None
    # Seat 1 plays first in hand 2: its turn is in the events, and it is the player's turn now.
    assert (
        any(e["type"] == "end_turn" and e["seat"] == 1 for e in dealt["events"])
        or dealt["status"] != "playing"
    )


def test_a_hand_deal_with_a_version_that_is_not_a_number_is_a_400(caller: Caller) -> None:
    view = caller.create_game()
    response = caller.post(f"/api/v1/games/{view['id']}/hands", {"expected_version": "1"})
    assert_problem(response, 400, "invalid_request")


def test_no_hand_is_dealt_once_the_game_is_over(caller: Caller) -> None:
    view = play_to_the_end(caller, caller.create_game(seed=SEED, target_score=None))
    assert_problem(caller.post(f"/api/v1/games/{view['id']}/hands"), 409, "game_over")


def test_the_end_of_a_game_shows_winners_and_seed(caller: Caller) -> None:
    view = play_to_the_end(caller, caller.create_game(seed=SEED, target_score=None))
    assert view["status"] == "finished" and view["winners"] and view["seed"] == SEED
    assert view["hand_result"]["reason"] in ("out", "blocked")
    assert Game.objects.get(id=view["id"]).finished_at is not None


def test_hooks_run_when_a_hand_ends_and_may_hide_the_seed(
    caller: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    ended: list[tuple[str, int, str]] = []
    monkeypatch.setattr(
        hooks, "_hand_over_hooks", [lambda g, s: ended.append((str(g.id), g.version, g.status))]
    )
    monkeypatch.setattr(hooks, "_seed_reveal_checks", [lambda g: False])
    view = play_to_the_end(caller, caller.create_game(seed=SEED, target_score=None))
    assert ended == [(view["id"], view["version"], "finished")]
    assert view["seed"] is None


# --- events -------------------------------------------------------------------------------------------------


def test_the_event_log_hides_other_seats_draws_and_pages_by_seq(caller: Caller) -> None:
    view = caller.create_game(seed=SEED)
    caller.moves(view, [{"type": "end_turn"}])
    response = caller.get(f"/api/v1/games/{view['id']}/events")
    assert response.status_code == 200
    log = response.json()
    events = log["events"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1)) and log["last"] == len(events)
    assert not log["has_more"] and events[0]["type"] == "deal"
    assert GameEvent.objects.filter(game_id=view["id"]).count() == len(events)
    for event in events:
        if event["type"] == "draw":
            assert ("card" in event) == (event["seat"] == 0)
    page = caller.get(f"/api/v1/games/{view['id']}/events?after=2&limit=3").json()
    assert [e["seq"] for e in page["events"]] == [3, 4, 5] and page["last"] == 5 and page["has_more"]
    assert caller.get(f"/api/v1/games/{view['id']}/events?after={log['last']}").json()["events"] == []
    assert_problem(caller.get(f"/api/v1/games/{view['id']}/events?after=-1"), 400, "invalid_request")
    assert_problem(caller.get(f"/api/v1/games/{view['id']}/events?after=x"), 400, "invalid_request")


# --- hints --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [SEED, SHARP_READS_THE_TABLE_SEED])
def test_a_hint_is_sharps_rest_of_the_turn(caller: Caller, seed: str) -> None:
    view = caller.create_game(seed=seed)
    response = caller.get(f"/api/v1/games/{view['id']}/hint")
    assert response.status_code == 200
    assert response.json() == {"version": 1, "moves": sharps_turn(view)}


def test_a_hint_weighs_the_other_hands_as_sharp_does_not_a_fixed_threat(caller: Caller) -> None:
    view = caller.create_game(seed=SHARP_READS_THE_TABLE_SEED)
    hint = caller.get(f"/api/v1/games/{view['id']}/hint").json()["moves"]
    assert hint != whole_turn(view)


def test_a_hint_asks_the_hint_guards_first(caller: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(game: Game) -> None:
        raise HintsRefusedInRankedAttempt()

    monkeypatch.setattr(hooks, "_hint_guards", [refuse])
    view = caller.create_game()
    assert_problem(caller.get(f"/api/v1/games/{view['id']}/hint"), 403, "hints_refused_in_ranked_attempt")


# --- analysis -----------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_analysis_gives_legal_moves_and_the_best_turn_without_a_token() -> None:
    body = {"rules": "classic", "hand": ["KS", "5c", "10♦"], "piles": {"N": ["6H"], "E": ["JC"]}, "stock": 20}
    response = APIClient().post("/api/v1/analysis", body, format="json")
    assert response.status_code == 200, response.content
    result = response.json()
    assert {"type": "play", "card": "5C", "to": "N"} in result["legal_moves"]
    assert {"type": "play", "card": "KS", "to": "NE"} in result["legal_moves"]
    assert result["legal_moves"][-1] == {"type": "end_turn"}
    played = {move.get("card") for move in result["best_turn"]}
    assert {"KS", "5C", "TD"} <= played
    assert not Game.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"hand": ["QX"]}, "invalid_card"),
        ({"hand": ["QD"], "piles": {"MIDDLE": []}}, "invalid_request"),
        ({"hand": ["QD"], "rules": {"wild": True}}, "unknown_rule_option"),
        ({"hand": ["QD"], "stock": 53}, "invalid_request"),
        ({"hand": ["QD"], "stock": "5"}, "invalid_request"),
        ({"hand": ["QD"], "piles": {"N": "5C"}}, "invalid_request"),
        ({"hand": "QD"}, "invalid_request"),
        ({"piles": {}}, "invalid_request"),
    ],
)
def test_analysis_of_a_malformed_position_is_a_400(body: dict[str, Any], code: str) -> None:
    assert_problem(APIClient().post("/api/v1/analysis", body, format="json"), 400, code)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"hand": ["QD"], "piles": {"N": ["QD"]}}, "duplicate_card"),
        ({"hand": ["QD", "qd"]}, "duplicate_card"),
        ({"hand": ["QD", "KS"], "piles": {"N": ["5C"]}, "stock": 50}, "too_many_cards"),
        ({"hand": ["QD"], "piles": {"N": ["2H", "9S"]}}, "pile_out_of_sequence"),
        ({"hand": ["QD"], "piles": {"N": ["9H", "8H"]}}, "pile_out_of_sequence"),
        ({"hand": ["QD"], "piles": {"NE": ["QH"]}}, "corner_without_king"),
        ({"hand": ["QD"], "piles": {"W": ["KH", "QS"]}}, "side_pile_starts_with_king"),
    ],
)
def test_analysis_of_a_position_no_game_can_reach_is_a_422_naming_the_fault(
    body: dict[str, Any], code: str
) -> None:
    assert_problem(APIClient().post("/api/v1/analysis", body, format="json"), 422, code)


@pytest.mark.django_db
def test_analysis_takes_corners_and_sides_as_the_rules_allow_them() -> None:
    body = {"rules": "any_space", "hand": ["QD"], "piles": {"NE": ["QH"], "W": ["KH", "QS"]}}
    assert APIClient().post("/api/v1/analysis", body, format="json").status_code == 200


@pytest.mark.django_db
def test_analysis_takes_a_whole_deck_between_hand_table_and_stock() -> None:
    body = {"hand": ["QD", "KS"], "piles": {"N": ["5C"]}, "stock": 49}
    assert APIClient().post("/api/v1/analysis", body, format="json").status_code == 200


# --- rate limits --------------------------------------------------------------------------------------------


def _rates(anon: str, user: str) -> dict[str, Any]:
    return {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": anon, "user": user}}


@pytest.mark.django_db
def test_requests_without_a_token_are_limited_per_address() -> None:
    with override_settings(REST_FRAMEWORK=_rates("2/min", "100/min")):
        client = APIClient()
        body = {"hand": ["QD"]}
        assert [client.post("/api/v1/analysis", body, format="json").status_code for _ in range(2)] == [
            200,
            200,
        ]
        limited = client.post("/api/v1/analysis", body, format="json")
        assert_problem(limited, 429, "rate_limited")
        assert int(limited["Retry-After"]) > 0
        other_address = client.post("/api/v1/analysis", body, format="json", REMOTE_ADDR="10.0.0.9")
        assert other_address.status_code == 200


def test_requests_with_a_token_are_limited_per_player(caller: Caller) -> None:
    with override_settings(REST_FRAMEWORK=_rates("100/min", "3/min")):
        statuses = [caller.get("/api/v1/players/me").status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        assert new_caller("Eve").get("/api/v1/players/me").status_code == 200


# --- the schema ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_schema_describes_every_games_operation() -> None:
    response = APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = json.loads(response.content)
    operations = {op["operationId"] for path in schema["paths"].values() for op in path.values()}
    assert {
        "players_create",
        "players_me",
        "players_token_rotate",
        "games_list",
        "games_create",
        "games_get",
        "games_moves",
        "games_hands_deal",
        "games_events",
        "games_hint",
        "analysis",
    } <= operations
    assert "bearerAuth" in schema["components"]["securitySchemes"]
    moves = schema["paths"]["/api/v1/games/{game_id}/moves"]["post"]["responses"]
    assert "application/problem+json" in moves["409"]["content"]
    components = schema["components"]["schemas"]
    moves_input = components["GameMovesInputRequest"]["properties"]["moves"]
    assert (moves_input["minItems"], moves_input["maxItems"]) == (1, 200)
    piles_input = components["AnalysisInputRequest"]["properties"]["piles"]
    assert list(piles_input["properties"]) == list(PILES) and piles_input["additionalProperties"] is False


def _skips_wal_flush(caller: Caller, view: dict[str, Any], moves: list[dict[str, Any]]) -> bool:
    with CaptureQueriesContext(connection) as queries:
        response = caller.moves(view, moves)
    assert response.status_code == 200, response.content
    return any("synchronous_commit" in query["sql"] for query in queries.captured_queries)


@pytest.mark.postgres
def test_only_moves_within_a_turn_commit_without_waiting_for_the_disk(caller: Caller) -> None:
    view = game_with_a_play(caller)
    assert _skips_wal_flush(caller, view, [a_play(view)])
    view = caller.get(f"/api/v1/games/{view['id']}").json()
    assert not _skips_wal_flush(caller, view, [{"type": "end_turn"}])
    game = Game.objects.get(id=view["id"])
    assert game.version == 3 and GameMove.objects.filter(game=game).count() == game.move_seq
    assert GameEvent.objects.filter(game=game).count() == game.event_seq


def test_an_empty_status_filter_is_refused_like_any_other_unknown_status(caller: Caller) -> None:
    caller.create_game()
    assert_problem(caller.get("/api/v1/games?status="), 400, "invalid_status")


@pytest.mark.parametrize("limit", ["", "0", "101", "-1", "2.0", "two", "²"])
def test_a_list_limit_outside_1_to_100_is_refused_not_replaced(caller: Caller, limit: str) -> None:
    assert_problem(caller.get(f"/api/v1/games?limit={quote(limit)}"), 400, "invalid_limit")


@pytest.mark.parametrize("query", ["since_version=", "since_version=-1"])
def test_an_empty_or_negative_since_version_is_refused(caller: Caller, query: str) -> None:
    game = caller.create_game()
    assert_problem(caller.get(f"/api/v1/games/{game['id']}?{query}"), 400, "invalid_request")


@pytest.mark.parametrize("query", ["after=", "limit="])
def test_an_empty_event_log_parameter_is_refused(caller: Caller, query: str) -> None:
    game = caller.create_game()
    assert_problem(caller.get(f"/api/v1/games/{game['id']}/events?{query}"), 400, "invalid_request")


@pytest.mark.django_db
def test_the_schema_states_the_limits_the_api_applies() -> None:
    response = APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = json.loads(response.content)

    def parameter(path: str, name: str) -> dict[str, Any]:
        found: dict[str, Any] = next(
            p["schema"] for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name
        )
        return found

    for path in ("/api/v1/daily/{day}", "/api/v1/daily/{day}/leaderboard"):
        assert parameter(path, "day")["pattern"] == "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    for path in ("/api/v1/games", "/api/v1/daily/{day}/leaderboard"):
        limit = parameter(path, "limit")
        assert (limit["minimum"], limit["maximum"]) == (1, 100)
    hand = schema["components"]["schemas"]["AnalysisInputRequest"]["properties"]["hand"]
    assert hand["maxItems"] == len(DECK) and hand["items"]["pattern"]
