"""Turns, the end of a hand, penalties, games of several hands, and the daily result."""

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from games.engine import (
    DIRECT,
    END_TURN,
    FINISHED,
    HAND_OVER,
    PLAYING,
    MovePile,
    Play,
    State,
    apply,
    daily_result,
    hand_penalty,
    legal_moves,
    make_rules,
    new_game,
    next_hand,
    step,
)
from games.engine.cards import sort_key

Position = Callable[..., State]
PlayRandom = Callable[..., Iterator[Any]]

# Every side taken, so that the hands below hold no card that can be played.
_TABLE = {"N": ["TS"], "E": ["TC"], "S": ["5S"], "W": ["5C"]}


def test_the_opening_draw_is_made_for_the_first_player_when_the_hand_is_dealt() -> None:
    state, events = new_game(rules=make_rules(), players=3, seed=bytes(32), target_score=None)
    assert [len(hand) for hand in state.hands] == [8, 7, 7]
    assert len(state.stock) == 52 - 21 - sum(len(pile) for pile in state.piles.values()) - 1
    draw = events[-1]
    assert draw["type"] == "draw" and "card" in draw
    assert draw == {"type": "draw", "seat": 0, "card": draw["card"], "stock": len(state.stock)}
    assert draw["card"] in state.hands[0]


def test_no_opening_draw_under_draw_timing_end() -> None:
    state, events = new_game(
        rules=make_rules({"draw_timing": "end"}), players=3, seed=bytes(32), target_score=None
    )
    assert [len(hand) for hand in state.hands] == [7, 7, 7]
    assert not any(event["type"] == "draw" for event in events)


@pytest.mark.parametrize("draw_timing", ["start", "end"])
def test_no_card_is_drawn_from_an_empty_stock(position: Position, draw_timing: str) -> None:
    state = position(hands=[["AD"], ["AC"]], piles=_TABLE, rules=make_rules({"draw_timing": draw_timing}))
    after, events = step(state, END_TURN)
    assert after.hands == [["AD"], ["AC"]]
    assert not any(event["type"] == "draw" for event in events)
    assert [event["type"] for event in events] == ["end_turn", "turn_start"]
    assert after.current_seat == 1


def test_end_turn_passes_play_to_the_left_and_wraps_around(position: Position) -> None:
    state = position(hands=[["AD"], ["AC"], ["AH"]], piles=_TABLE, stock=["2C", "3C", "4C"])
    seats = []
    for _ in range(4):
        state = apply(state, END_TURN)
        seats.append(state.current_seat)
    assert seats == [1, 2, 0, 1]
    assert state.turns_taken == [2, 1, 1]


def test_going_out_ends_the_hand_at_once(position: Position) -> None:
    state = position(hands=[["9D", "9H"], ["KS", "2C"], ["3C"]], piles=_TABLE, stock=["4C", "6C"])
    state = apply(state, Play("9D", "N"))
    assert state.status == PLAYING
    state, events = step(state, Play("9H", "E"))
    assert state.status == FINISHED
    assert legal_moves(state) == []
    assert state.stock == ["4C", "6C"]
    assert [event["type"] for event in events] == ["play", "hand_over", "game_over"]
    result = state.hand_results[-1]
    assert (result["reason"], result["out_seat"], result["penalties"]) == ("out", 0, [0, 11, 1])
    assert state.scores == [0, 11, 1]
    assert state.winners == [0]


def test_hand_is_blocked_after_a_full_trip_around_the_table_without_a_play_once_the_stock_is_empty(
    position: Position,
) -> None:
    state = position(hands=[["AD"], ["AC"], ["AH"]], piles=_TABLE)
    state = apply(state, END_TURN)
    state = apply(state, END_TURN)
    assert (state.status, state.idle_turns) == (PLAYING, 2)
    state, events = step(state, END_TURN)
    assert state.status == FINISHED
    assert state.hand_results[-1]["reason"] == "blocked"
    assert state.hand_results[-1]["out_seat"] is None
    assert [event["type"] for event in events] == ["end_turn", "hand_over", "game_over"]


def test_a_card_played_from_a_hand_starts_the_trip_around_the_table_again(position: Position) -> None:
    state = position(hands=[["AD"], ["AC", "9D"], ["AH"]], piles=_TABLE)
    state = apply(state, END_TURN)
    state = apply(state, Play("9D", "N"))
    state = apply(state, END_TURN)
    assert state.idle_turns == 0
    state = apply(apply(state, END_TURN), END_TURN)
    assert (state.status, state.idle_turns) == (PLAYING, 2)
    assert apply(state, END_TURN).status == FINISHED


def test_pile_moves_do_not_count_as_plays_for_a_blocked_hand(position: Position) -> None:
    state = position(hands=[["AD"], ["AC"]], piles={**_TABLE, "N": ["9D"], "E": ["TC"]})
    state = apply(state, MovePile("N", "E"))
    state = apply(state, END_TURN)
    assert state.idle_turns == 1
    assert apply(state, END_TURN).hand_results[-1]["reason"] == "blocked"


def test_turns_taken_while_the_stock_lasts_do_not_count_towards_a_blocked_hand(position: Position) -> None:
    state = position(hands=[["AD"], ["AC"]], piles=_TABLE, stock=["2C", "3C", "4C"])
    for _ in range(3):
        state = apply(state, END_TURN)
        assert state.idle_turns == 0
    assert state.stock == []
    # Seat 1 drew the last card when its turn began and played it out with the stock empty: that turn counts.
    state = apply(state, END_TURN)
    assert state.idle_turns == 1
    assert apply(state, END_TURN).status == FINISHED


def test_turn_that_draws_the_last_card_at_its_end_does_not_count_towards_a_blocked_hand(
    position: Position,
) -> None:
    rules = make_rules({"draw_timing": "end"})
    state = position(hands=[["AD"], ["AC"]], piles=_TABLE, stock=["2C"], rules=rules)
    state = apply(state, END_TURN)
    assert (state.stock, state.idle_turns) == ([], 0)
    state = apply(state, END_TURN)
    # Seat 0 drew the last card at the end of its turn; it gets a turn to play it before the hand can block.
    assert (state.status, state.current_seat, state.idle_turns) == (PLAYING, 0, 1)
    assert apply(state, END_TURN).status == FINISHED


def test_penalty_is_ten_per_king_and_one_per_other_card_left_in_hand(position: Position) -> None:
    state = position(hands=[["9D"], ["KS", "KD", "2C"], ["3C", "QH"], ["AH"]], piles=_TABLE)
    state = apply(state, Play("9D", "N"))
    assert state.hand_results[-1]["penalties"] == [0, 21, 2, 1]
    assert state.scores == [0, 21, 2, 1]


def test_scores_add_up_and_the_game_ends_when_a_total_reaches_the_target_with_one_lowest(
    position: Position,
) -> None:
    state = position(hands=[["9D"], ["KS"], ["3C", "4C"]], piles=_TABLE, scores=[3, 3, 6], target_score=15)
    state = apply(state, Play("9D", "N"))
    assert state.scores == [3, 13, 8]
    assert (state.status, state.winners) == (HAND_OVER, None)
    state, _ = next_hand(state)
    assert (state.status, state.hand_number, state.scores) == (PLAYING, 2, [3, 13, 8])

    state = position(hands=[["9D"], ["KS"], ["3C", "4C"]], piles=_TABLE, scores=[3, 5, 6], target_score=15)
    state, events = step(state, Play("9D", "N"))
    assert state.scores == [3, 15, 8]
    assert (state.status, state.winners) == (FINISHED, [0])
    assert events[-1] == {"type": "game_over", "winners": [0], "scores": [3, 15, 8]}


def test_a_shared_lowest_total_at_the_target_means_one_more_hand(position: Position) -> None:
    state = position(hands=[["9D"], ["2C"], ["AC"]], piles=_TABLE, scores=[3, 2, 7], target_score=8)
    state = apply(state, Play("9D", "N"))
    assert state.scores == [3, 3, 8]
    assert (state.status, state.winners) == (HAND_OVER, None)
    state, _ = next_hand(state)
    assert state.status == PLAYING
    assert (state.hand_number, state.dealer, state.current_seat) == (2, 0, 1)


def test_a_game_to_a_target_score_plays_hands_until_one_player_alone_has_the_lowest_total(
    play_random: PlayRandom,
) -> None:
    rng = random.Random(3)
    state, _ = new_game(rules=make_rules(), players=4, seed=bytes(range(32)), target_score=15)
    results = []
    while True:
        for record in play_random(state, rng):
            state = record.after
        # The state keeps the last hand's result only, so that it does not grow with the hands played.
        assert len(state.hand_results) == 1
        results.append(state.hand_results[0])
        if state.status == FINISHED:
            break
        state, _ = next_hand(state)
    assert state.hand_number == len(results) > 1
    assert state.scores == [sum(result["penalties"][seat] for result in results) for seat in range(4)]
    assert [result["hand_number"] for result in results] == list(range(1, len(results) + 1))
    assert max(state.scores) >= 15
    assert state.winners == [state.scores.index(min(state.scores))]
    assert state.scores.count(min(state.scores)) == 1


def test_a_game_without_a_target_score_is_a_single_hand(play_random: PlayRandom) -> None:
    state, _ = new_game(rules=make_rules(), players=2, seed=bytes(32), target_score=None)
    for record in play_random(state, random.Random(5)):
        state = record.after
    assert state.status == FINISHED
    assert len(state.hand_results) == 1
    assert state.winners == [seat for seat in range(2) if state.scores[seat] == min(state.scores)]


def test_daily_result_of_a_player_who_goes_out_is_the_others_penalties(position: Position) -> None:
    state = position(hands=[["9D"], ["KS", "2C"], ["3C"], ["4C"]], piles=_TABLE)
    state = apply(state, Play("9D", "N"))
    assert daily_result(state, 0) == 13


def test_daily_result_of_a_player_who_does_not_go_out_is_minus_its_own_hand(position: Position) -> None:
    state = position(hands=[["KS", "2C"], ["9D"], ["3C"], ["4C"]], piles=_TABLE, current_seat=1)
    state = apply(state, Play("9D", "N"))
    assert daily_result(state, 0) == -11
    assert daily_result(state, 1) == 13


def test_daily_result_of_a_blocked_hand_is_minus_the_own_hand_even_when_exempt(position: Position) -> None:
    state = position(hands=[["2C"], ["KS", "3C"], ["3D", "4C"], ["AH", "4D"]], piles=_TABLE)
    while state.status == PLAYING:
        state = apply(state, END_TURN)
    assert state.hand_results[-1]["penalties"] == [0, 11, 2, 2]
    assert daily_result(state, 0) == -1
    assert daily_result(state, 1) == -11


def test_daily_result_needs_a_finished_hand(position: Position) -> None:
    with pytest.raises(ValueError):
        daily_result(position(hands=[["2C"], ["3C"]]), 0)


def test_daily_deal_is_one_classic_hand_for_four_with_seat_zero_first(play_random: PlayRandom) -> None:
    state, _ = new_game(rules=make_rules(), players=4, seed=bytes(32), target_score=None, seed_scheme=DIRECT)
    assert (state.current_seat, state.dealer) == (0, 3)
    for record in play_random(state, random.Random(1)):
        state = record.after
    result = state.hand_results[-1]
    expected = (
        sum(hand_penalty(hand) for hand in result["hands"][1:])
        if result["out_seat"] == 0
        else -hand_penalty(result["hands"][0])
    )
    assert daily_result(state) == expected


@pytest.mark.parametrize(
    "spec",
    [
        "classic",
        "casual",
        "any_space",
        {"preset": "classic", "draw_timing": "end"},
        {"preset": "classic", "draw": "until_playable"},
        {"preset": "casual", "blocked_scoring": "everyone", "draw_timing": "end"},
    ],
    ids=str,
)
def test_apply_makes_the_state_step_makes_without_the_events(spec: Any) -> None:
    """apply writes out no events; every state it makes is step's, through whole games of several hands."""
    rules = make_rules(spec)
    for index in range(12):
        rng = random.Random(index)
        state, _ = new_game(
            rules=rules, players=rng.choice((2, 3, 4)), seed=bytes([index]) * 32, target_score=30
        )
        moves = 0
        while state.status != FINISHED:
            if state.status == HAND_OVER:
                state, _ = next_hand(state)
            legal = legal_moves(state)
            move = END_TURN if rng.random() < 0.3 else rng.choice(legal)
            applied = apply(state, move)
            stepped, events = step(state, move)
            assert applied.to_json() == stepped.to_json()
            assert events and applied.status == stepped.status
            state = stepped
            moves += 1
        assert moves > 50


def test_a_drawn_card_goes_into_its_place_in_the_hand_or_a_hand_out_of_order_is_sorted() -> None:
    state, _ = new_game(rules=make_rules(), players=2, seed=bytes(32), target_score=None)
    top = state.stock[0]
    held = [card for card in ("AC", "5D", "9H", "KS") if card != top]
    for hand in (held, list(reversed(held))):
        state.hands[1] = list(hand)
        after = apply(state, END_TURN)
        assert after.hands[1] == sorted([*hand, top], key=sort_key)
        # The state it was made from keeps its own hand.
        assert state.hands[1] == hand
