"""Moves and new hands (games/apis/moves.py): moves and their errors, versions and If-Match, idempotent
retries, what commits without waiting for the disk, and dealing the next hand."""

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import example, given
from hypothesis import strategies as st
from rest_framework.exceptions import ValidationError

from games import services
from games.apis.moves import GameHandDealApi, GameMovesApi, _moves_input, _version_input
from games.engine import DECK, PILES, Rules, State, play_refusal
from games.errors import TooManyMoves
from games.models import Game, GameEvent, GameMove, IdempotentRequest
from games.services import moves as move_services
from tests.support.games import (
    SEED,
    SHARP_READS_THE_TABLE_SEED,
    Caller,
    a_play,
    an_illegal_play,
    backdate,
    game_with_a_play,
    new_caller,
    play_to_the_end,
    sharps_turn,
    whole_turn,
)
from tests.support.problems import assert_problem
from tests.support.tables import PERSON, seat_table

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
        (None, "invalid_move"),
    ],
)
def test_a_malformed_move_is_a_400_naming_its_index(caller: Caller, move: Any, code: str) -> None:
    view = caller.create_game()
    body = assert_problem(caller.moves(view, [{"type": "end_turn"}, move]), 400, code)
    assert body["move_index"] == 1
    assert Game.objects.get(id=view["id"]).version == 1


def test_a_null_move_is_the_engine_s_400_however_the_body_is_read(caller: Caller) -> None:
    view = caller.create_game()
    # A version sent as 1.0 takes the body through the input serializer; as 1, it is taken as it is.
    for version in (1, 1.0):
        body = {"moves": [{"type": "end_turn"}, None], "expected_version": version}
        problem = assert_problem(caller.post(f"/api/v1/games/{view['id']}/moves", body), 400, "invalid_move")
        assert problem["move_index"] == 1
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
    assert body["current"]["version"] == 2 and response["ETag"] == '"2"'


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


def test_without_a_version_the_moves_apply_to_the_current_game(caller: Caller) -> None:
    view = caller.create_game()
    response = caller.post(f"/api/v1/games/{view['id']}/moves", {"moves": [{"type": "end_turn"}]})
    assert response.status_code == 200 and response.json()["version"] == 2


def _skips_wal_flush(
    caller: Caller, view: dict[str, Any], moves: Sequence[Mapping[str, Any]], **extra: Any
) -> tuple[bool, dict[str, Any]]:
    with CaptureQueriesContext(connection) as queries:
        response = caller.moves(view, moves, **extra)
    assert response.status_code == 200, response.content
    return any("synchronous_commit" in query["sql"] for query in queries.captured_queries), response.json()


@pytest.mark.postgres
def test_only_requests_that_end_no_hand_and_carry_no_key_commit_without_waiting_for_the_disk(
    caller: Caller,
) -> None:
    """Through a whole game, play by play: a play, and a turn's end with the computer players' turns, commit
    asynchronously; a request that ends the hand or the game, a deal, and a request with an Idempotency-Key
    wait for the flush."""
    view = game_with_a_play(caller, target_score=8, opponents=2)
    skipped, view = _skips_wal_flush(caller, view, [a_play(view)], HTTP_IDEMPOTENCY_KEY="a-play")
    assert not skipped
    kinds: dict[bool, set[str]] = {True: set(), False: set()}
    for _ in range(2000):
        if view["status"] == "finished":
            break
        if view["status"] == "hand_over":
            with CaptureQueriesContext(connection) as queries:
                response = caller.post(
                    f"/api/v1/games/{view['id']}/hands", {"expected_version": view["version"]}
                )
            assert response.status_code == 200, response.content
            assert not any("synchronous_commit" in query["sql"] for query in queries.captured_queries)
            view = response.json()
            continue
        *plays, end = whole_turn(view)
        for move in [*plays, end]:
            skipped, view = _skips_wal_flush(caller, view, [move])
            types = {event["type"] for event in view["events"]}
            assert skipped == types.isdisjoint({"deal", "hand_over", "game_over"}), types
            kinds[skipped] |= types
    assert view["status"] == "finished"
    assert {"play", "end_turn", "draw", "turn_start"} <= kinds[True]
    assert {"hand_over", "game_over"} <= kinds[False]
    game = Game.objects.get(id=view["id"])
    assert GameMove.objects.filter(game=game).count() == game.move_seq
    assert GameEvent.objects.filter(game=game).count() == game.event_seq


@pytest.mark.postgres
def test_a_turn_that_begins_another_persons_turn_waits_for_the_disk_and_a_play_does_not(db: None) -> None:
    """Another person's `your_turn` is a person event their stream may send at once: a request that stores
    one commits durably, so that a crash cannot lose it and give its seq again. The requester's own events
    may go with the request's asynchronous commit."""
    table = seat_table([PERSON, PERSON], seed=SEED)
    view = table.view(0)
    handed_over = 0
    for _ in range(6):
        if view["status"] != "playing":
            break
        mover = view["current_seat"]
        view = table.view(mover)
        for move in whole_turn(view):
            skipped, view = _skips_wal_flush(table.people[mover], view, [move])
            types = {event["type"] for event in view["events"]}
            others = [
                event for event in view["events"] if event["type"] == "turn_start" and event["seat"] != mover
            ]
            if not types.isdisjoint({"deal", "hand_over", "game_over"}):
                assert not skipped
            elif others:
                assert not skipped, view["events"]
                handed_over += 1
            else:
                assert skipped, view["events"]
    assert handed_over >= 2


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
    monkeypatch.setattr(move_services, "_replay", lambda **_: None)
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


def test_an_idempotency_key_older_than_24_hours_is_not_honoured(caller: Caller) -> None:
    view = caller.create_game(seed=SEED)
    path, body = f"/api/v1/games/{view['id']}/moves", {"moves": [{"type": "end_turn"}]}
    assert caller.post(path, body, HTTP_IDEMPOTENCY_KEY="k").status_code == 200
    backdate(IdempotentRequest.objects.all(), 24.5)
    again = caller.post(path, body, HTTP_IDEMPOTENCY_KEY="k")
    # Applied again, as a new request: the first response is not replayed.
    assert again.status_code == 200 and "Idempotent-Replayed" not in again
    assert again.json()["version"] == 3 and IdempotentRequest.objects.count() == 1


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


# --- reading the body without the input serializers ------------------------------------------------------
# The moves and new-hand views take a plain body as it is (games/apis/moves.py _moves_input, _version_input):
# whatever that fast path takes, the serializer takes with the same values, and anything else goes through the
# serializer, so the refusals are the serializer's.

END_TURN = {"type": "end_turn"}

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=2**40),
    st.floats(allow_nan=False),
    st.text(max_size=3),
    st.just({}),
)
move_lists = st.one_of(
    st.lists(st.one_of(st.just(END_TURN), values), max_size=3),
    st.integers(min_value=services.MAX_MOVES - 1, max_value=services.MAX_MOVES + 1).map(
        lambda n: [END_TURN] * n
    ),
)
bodies = st.one_of(
    st.dictionaries(
        st.sampled_from(["moves", "expected_version", "extra"]),
        st.one_of(values, move_lists),
        max_size=3,
    ),
    values,
    move_lists,
)


def _outcome(read: Any) -> Any:
    try:
        return ("taken", read())
    except ValidationError as error:
        return ("refused", error.detail)
    except TooManyMoves as error:
        return ("too_many", error.detail)


def _serializer_moves(body: Any) -> Any:
    checked = GameMovesApi.GameMovesInputSerializer(data=body)
    checked.is_valid(raise_exception=True)
    return checked.validated_data["moves"], checked.validated_data.get("expected_version")


def _serializer_version(body: Any) -> Any:
    checked = GameHandDealApi.GameHandDealInputSerializer(data=body)
    checked.is_valid(raise_exception=True)
    return checked.validated_data.get("expected_version")


@given(bodies)
# A null move is a move the engine reads and refuses, whichever way the body is read.
@example({"moves": [None]})
@example({"moves": [END_TURN, None], "expected_version": 3})
def test_a_moves_body_is_read_as_the_serializer_reads_it(body: Any) -> None:
    request: Any = SimpleNamespace(data=body)
    fast = _outcome(lambda: _moves_input(request, GameMovesApi.GameMovesInputSerializer))
    assert fast == _outcome(lambda: _serializer_moves(body))
    if fast[0] == "taken":
        assert [type(value) for value in fast[1]] == [list, type(_serializer_moves(body)[1])]


@given(bodies)
def test_a_new_hand_body_is_read_as_the_serializer_reads_it(body: Any) -> None:
    request: Any = SimpleNamespace(data=body)
    fast = _outcome(lambda: _version_input(request, GameHandDealApi.GameHandDealInputSerializer))
    assert fast == _outcome(lambda: _serializer_version(body))
