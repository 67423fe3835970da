"""The games resource (games/apis/games.py): creating, listing and reading games, and a game's event
log."""

import base64
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from games import selectors
from games.engine import PILES
from games.models import Game, GameEvent
from tests.support.games import SEED, Caller, new_caller, shown
from tests.support.problems import assert_problem

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
        (shown("Ada"), "person", None),
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
        levels=["easy", "sharp"],
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


@pytest.mark.parametrize("value", ["TRUE", "true", 1])
def test_a_boolean_rule_option_sent_as_anything_but_json_true_or_false_is_refused(
    caller: Caller, value: object
) -> None:
    response = caller.post("/api/v1/games", {"rules": {"king_pile_to_corner": value}})
    assert_problem(response, 400, "invalid_rule_value")


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
    everything = caller.get(f"/api/v1/games/{view['id']}/events").json()["items"]
    assert len(everything) > 5
    monkeypatch.setattr(selectors, "EVENTS_PAGE_MAX", 5)
    page = caller.get(f"/api/v1/games/{view['id']}?since_version=0").json()
    assert page["events"] == everything[:5] and page["more_events_after"] == everything[4]["seq"]
    rest = caller.get(f"/api/v1/games/{view['id']}/events?after={page['more_events_after']}&limit=1000")
    assert page["events"] + rest.json()["items"] == everything
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
    assert [game["id"] for game in first["items"]] == [ids[2], ids[1]]
    assert "hand" not in first["items"][0]
    second = caller.client.get(first["next"]).json()
    assert [game["id"] for game in second["items"]] == [ids[0]] and second["next"] is None
    finished = caller.get("/api/v1/games?status=finished").json()
    assert [game["id"] for game in finished["items"]] == [ids[0]]
    assert_problem(caller.get("/api/v1/games?status=paused"), 400, "invalid_status")


@pytest.mark.parametrize(
    "position",
    [
        "",
        "garbage",
        "9999-99-99",
        "9" * 100,
        # What DRF would read as the first page or a page it caps, and never gives out.
        "2026-01-01T00:00:00Z&x=1",
        "2026-01-01T00:00:00Z&p=x",
        "2026-01-01T00:00:00Z&o=0",
        "2026-01-01T00:00:00Z&o=100000000",
        "2026-01-01T00:00:00Z&r=0",
    ],
)
def test_a_cursor_the_api_did_not_give_out_is_a_400(caller: Caller, position: str) -> None:
    caller.create_game()
    assert_problem(caller.get("/api/v1/games?cursor=not-a-cursor"), 400, "invalid_cursor")
    forged = quote(base64.b64encode(f"p={position}".encode()).decode())
    assert_problem(caller.get(f"/api/v1/games?cursor={forged}"), 400, "invalid_cursor")
    # An empty cursor is not one either (DRF read it as none, the first page), as on the leaderboard.
    assert_problem(caller.get("/api/v1/games?cursor="), 400, "invalid_cursor")


@pytest.mark.parametrize(
    "position",
    [
        "2026-12-07 00:00:00+16:00",  # an offset PostgreSQL does not take
        "2026-12-07 00:00:00-23:59",
        "2026-12-07 00:00:00+01:00",
        "2026-12-07 00:00:00",  # no offset at all
    ],
)
def test_a_cursor_whose_time_is_not_in_utc_was_not_given_out(caller: Caller, position: str) -> None:
    """The cursors given out name a game's created_at in UTC; one at another offset is 400 invalid_cursor,
    never an offset handed to PostgreSQL (which refuses ±16:00 and beyond: it was a 500)."""
    caller.create_game()
    forged = base64.b64encode(urlencode({"p": position}).encode()).decode()
    assert_problem(caller.get(f"/api/v1/games?cursor={quote(forged)}"), 400, "invalid_cursor")
    given = base64.b64encode(urlencode({"p": "2026-12-07 00:00:00+00:00"}).encode()).decode()
    assert caller.get(f"/api/v1/games?cursor={quote(given)}").status_code == 200


@pytest.mark.parametrize("text", ["x", '{"x":1}', "r=1", "o=1", "o=1&r=1"])
def test_a_cursor_without_a_position_or_with_padding_dropped_is_a_400(caller: Caller, text: str) -> None:
    caller.create_game()
    encoded = base64.b64encode(text.encode()).decode()
    for cursor in {encoded, encoded.rstrip("=")}:
        assert_problem(caller.get(f"/api/v1/games?cursor={quote(cursor)}"), 400, "invalid_cursor")


def test_an_empty_status_filter_is_refused_like_any_other_unknown_status(caller: Caller) -> None:
    caller.create_game()
    assert_problem(caller.get("/api/v1/games?status="), 400, "invalid_status")


@pytest.mark.parametrize("limit", ["", "0", "101", "-1", "2.0", "two", "²"])
def test_a_list_limit_outside_1_to_100_is_refused_not_replaced(caller: Caller, limit: str) -> None:
    assert_problem(caller.get(f"/api/v1/games?limit={quote(limit)}"), 400, "invalid_limit")


@pytest.mark.parametrize("limit", ["", "0", "1001", "-1", "2.0", "two", "²"])
def test_an_event_page_limit_outside_1_to_1000_is_invalid_limit_as_every_lists_is(
    caller: Caller, limit: str
) -> None:
    game = caller.create_game()
    events = f"/api/v1/games/{game['id']}/events"
    assert_problem(caller.get(f"{events}?limit={quote(limit)}"), 400, "invalid_limit")
    assert caller.get(f"{events}?limit=1000").status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        "since_version=",
        "since_version=-1",
        # An integer is ASCII digits: not another script's, nor what Python's int() also reads.
        "since_version=%D9%A1",
        "since_version=1_0",
        "since_version=1.0",
        "since_version=%2B1",
        "since_version=%201",
    ],
)
def test_an_empty_negative_or_not_plainly_written_since_version_is_refused(
    caller: Caller, query: str
) -> None:
    game = caller.create_game()
    assert_problem(caller.get(f"/api/v1/games/{game['id']}?{query}"), 400, "invalid_request")


@pytest.mark.parametrize("after", ["%D9%A1", "1_0", "1.0", "%2B1"])
def test_an_events_after_not_written_in_ascii_digits_is_refused(caller: Caller, after: str) -> None:
    game = caller.create_game()
    response = caller.get(f"/api/v1/games/{game['id']}/events?after={after}")
    assert "after" in assert_problem(response, 400, "invalid_request")["errors"]


@pytest.mark.parametrize("query", ["", "?since_version=-1"])
def test_a_game_read_with_a_bad_token_is_a_401_whatever_else_is_wrong(caller: Caller, query: str) -> None:
    """GET a game looks its token up with the game (one read): a bad token is still refused first."""
    game = caller.create_game()
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION="Bearer kc_not-a-token")
    assert_problem(stranger.get(f"/api/v1/games/{game['id']}{query}"), 401, "invalid_token")
    other = new_caller("Grace")
    assert_problem(other.get(f"/api/v1/games/{game['id']}"), 404, "game_not_found")


# --- events -------------------------------------------------------------------------------------------------


def test_the_event_log_hides_other_seats_draws_and_pages_by_seq(caller: Caller) -> None:
    view = caller.create_game(seed=SEED)
    caller.moves(view, [{"type": "end_turn"}])
    response = caller.get(f"/api/v1/games/{view['id']}/events")
    assert response.status_code == 200
    log = response.json()
    events = log["items"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert log["more_after"] == len(events) and log["next"] is None and events[0]["type"] == "deal"
    assert GameEvent.objects.filter(game_id=view["id"]).count() == len(events)
    for event in events:
        if event["type"] == "draw":
            assert ("card" in event) == (event["seat"] == 0)
    page = caller.get(f"/api/v1/games/{view['id']}/events?after=2&limit=3").json()
    assert [e["seq"] for e in page["items"]] == [3, 4, 5] and page["more_after"] == 5
    assert page["next"] == f"http://testserver/api/v1/games/{view['id']}/events?after=5&limit=3"
    following = caller.get(page["next"]).json()
    assert [e["seq"] for e in following["items"]] == [6, 7, 8] and following["more_after"] == 8
    assert caller.get(f"/api/v1/games/{view['id']}/events?after={log['more_after']}").json()["items"] == []
    assert_problem(caller.get(f"/api/v1/games/{view['id']}/events?after=-1"), 400, "invalid_request")
    assert_problem(caller.get(f"/api/v1/games/{view['id']}/events?after=x"), 400, "invalid_request")


@pytest.mark.parametrize(("query", "code"), [("after=", "invalid_request"), ("limit=", "invalid_limit")])
def test_an_empty_event_log_parameter_is_refused(caller: Caller, query: str, code: str) -> None:
    game = caller.create_game()
    assert_problem(caller.get(f"/api/v1/games/{game['id']}/events?{query}"), 400, code)
