"""Daily par: the line found replays to its result, beats the computer players in seat 0, is deterministic,
keeps to its budget and reads nothing but the revealed deal."""

import builtins
import hashlib
import itertools
import os
import socket
from typing import Any

import pytest

from games.engine import (
    DIRECT,
    END_TURN,
    PLAYING,
    Play,
    State,
    daily_result,
    hand_penalty,
    make_rules,
    new_game,
    step,
)
from games.engine.par import (
    DEFAULT_NODE_BUDGET,
    POSITIONS_PER_NODE,
    Par,
    ParError,
    RevealedDeal,
    daily_start,
    level_line,
    line_steps,
    par_search,
    replay_line,
    turn_positions,
)
from games.engine.players import Budget, play_turn
from games.engine.players.table import TableRules, apply_move, cards_mask, table_piles

# Par's computer players play without the wall-clock cutoff, so these replays do too (a minute is never
# reached).
NO_CUTOFF = Budget(cutoff_ms=60_000)

SMALL_BUDGET = 300


def deal_of(label: str, level: str = "normal") -> RevealedDeal:
    return RevealedDeal(hashlib.sha256(label.encode()).digest(), make_rules("classic"), (level,) * 3)


DEALS = [deal_of(f"par test deal {number}") for number in range(4)]
# A deal on which the player cannot go out first: par stops where the hand is lightest.
NO_WAY_OUT = deal_of("par test deal 17")


def played_by(deal: RevealedDeal, seat_0_level: str) -> State:
    """The hand played to its end with a computer player of `seat_0_level` in seat 0, every seat through the
    players' own `play_turn`: a replay that shares no code with the par module."""
    state = new_game(rules=deal.rules, players=4, seed=deal.seed, target_score=None, seed_scheme=DIRECT)[0]
    levels = (seat_0_level, *deal.levels)
    while state.status == PLAYING:
        state = play_turn(state, levels[state.current_seat], deal.seed, budget=NO_CUTOFF)[0]
    return state


def replayed_by_hand(deal: RevealedDeal, par: Par) -> State:
    """The par line replayed through `step`, the computer seats through `play_turn`."""
    state = new_game(rules=deal.rules, players=4, seed=deal.seed, target_score=None, seed_scheme=DIRECT)[0]
    for move in par.moves:
        state = step(state, move, seat=0)[0]
        while state.status == PLAYING and state.current_seat != 0:
            state = play_turn(state, deal.levels[state.current_seat - 1], deal.seed)[0]
    return state


@pytest.mark.parametrize("deal", DEALS[:2])
def test_the_par_line_replays_through_step_to_the_reported_result_and_turns(deal: RevealedDeal) -> None:
    par = par_search(deal, node_budget=SMALL_BUDGET)
    state = replayed_by_hand(deal, par)
    if par.finished:
        assert state.status != PLAYING
        assert daily_result(state, 0) == par.result
        assert state.hand_results[-1]["turns_taken"][0] == par.turns
    else:
        assert state.status == PLAYING
        assert -hand_penalty(state.hands[0]) == par.result
        assert state.turns_taken[0] == par.turns
    assert replay_line(deal, par.line_json()).result == par.result


@pytest.mark.parametrize("deal", DEALS)
def test_par_is_at_least_what_normal_and_sharp_score_in_seat_0(deal: RevealedDeal) -> None:
    par = par_search(deal, node_budget=SMALL_BUDGET)
    for level in ("normal", "sharp"):
        assert par.result >= daily_result(played_by(deal, level), 0)


def test_level_line_is_what_that_level_plays_in_seat_0() -> None:
    deal = DEALS[0]
    assert replay_line(deal, level_line(deal, "sharp")).state.to_json() == played_by(deal, "sharp").to_json()


def test_the_search_alone_beats_normal_in_seat_0_on_most_deals() -> None:
    """The search, not its seed lines: without them it finds a strictly better line than normal's."""
    better = 0
    for deal in DEALS:
        par = par_search(deal, node_budget=SMALL_BUDGET, seed_lines=[])
        better += par.result > daily_result(played_by(deal, "normal"), 0)
    assert better >= 3


def test_the_same_deal_and_budget_give_the_same_line() -> None:
    first = par_search(DEALS[1], node_budget=SMALL_BUDGET)
    second = par_search(deal_of("par test deal 1"), node_budget=SMALL_BUDGET)
    assert first == second


def test_the_search_keeps_to_its_node_budget_and_returns_the_best_found_so_far() -> None:
    deal = DEALS[0]
    small = par_search(deal, node_budget=20)
    larger = par_search(deal, node_budget=SMALL_BUDGET)
    assert small.budget_reached and small.nodes <= 20
    assert larger.nodes <= SMALL_BUDGET
    assert small.nodes == small.turns_replayed + small.positions // POSITIONS_PER_NODE
    # A larger budget makes the same nodes first, so it never ends with less.
    assert larger.result >= small.result
    assert replay_line(deal, small.moves).result == small.result


def test_a_time_limit_cuts_the_search_short_with_a_verified_line() -> None:
    ticks = itertools.count()
    par = par_search(DEALS[2], time_limit=5, clock=lambda: float(next(ticks)))
    assert par.budget_reached
    assert par.nodes < DEFAULT_NODE_BUDGET
    assert replay_line(DEALS[2], par.moves).result == par.result


def test_without_seed_lines_and_cut_short_at_once_the_search_still_returns_a_line() -> None:
    par = par_search(DEALS[0], node_budget=12, seed_lines=[])
    assert par.method == "beam"
    assert replay_line(DEALS[0], par.moves).result == par.result


def test_a_search_that_ends_before_its_budget_has_searched_every_line() -> None:
    # On this deal the opponents end the hand quickly whatever the player does.
    exhaustive = par_search(NO_WAY_OUT, node_budget=SMALL_BUDGET)
    assert not exhaustive.budget_reached and exhaustive.nodes < SMALL_BUDGET
    again = par_search(NO_WAY_OUT, node_budget=10 * SMALL_BUDGET)
    assert (again.moves, again.result, again.nodes) == (exhaustive.moves, exhaustive.result, exhaustive.nodes)


def test_a_stopping_line_is_scored_as_an_unfinished_attempt_and_can_be_left_out() -> None:
    stopping = par_search(NO_WAY_OUT, node_budget=SMALL_BUDGET)
    assert not stopping.finished
    outcome = replay_line(NO_WAY_OUT, stopping.moves)
    assert outcome.state.status == PLAYING
    assert stopping.result == -hand_penalty(outcome.state.hands[0]) < 0
    finishing = par_search(NO_WAY_OUT, node_budget=SMALL_BUDGET, allow_stop=False)
    assert finishing.finished
    assert finishing.result <= stopping.result


def test_par_reads_nothing_but_the_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Par is computed from the revealed deal alone: no file, no environment, no network."""
    expected = par_search(DEALS[3], node_budget=SMALL_BUDGET)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("par must read nothing but the deal")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(os, "environ", {})
    assert par_search(DEALS[3], node_budget=SMALL_BUDGET) == expected


def test_the_daily_start_is_the_servers_deal_with_the_player_to_move() -> None:
    deal = DEALS[0]
    state = daily_start(deal)
    dealt = new_game(rules=deal.rules, players=4, seed=deal.seed, target_score=None, seed_scheme=DIRECT)[0]
    assert state.to_json() == dealt.to_json()
    assert state.current_seat == 0


def test_replay_refuses_an_illegal_move_and_a_move_after_the_hand() -> None:
    deal = DEALS[0]
    hand = daily_start(deal).hands[0]
    with pytest.raises(ParError, match="move 1 is refused: card_not_in_hand"):
        replay_line(deal, [Play(next(card for card in ("AC", "AD") if card not in hand), "N")])
    with pytest.raises(ParError, match="move 1 is refused: invalid_move"):
        replay_line(deal, [{"type": "fly"}])
    line = level_line(deal, "normal")
    with pytest.raises(ParError, match="comes after the hand is over"):
        replay_line(deal, [*line, END_TURN])


def test_a_line_left_unfinished_scores_the_hand_as_it_stands() -> None:
    deal = DEALS[0]
    outcome = replay_line(deal, [END_TURN])
    assert not outcome.finished
    assert outcome.turns == 1
    assert outcome.result == -hand_penalty(outcome.state.hands[0])


def test_turn_positions_are_distinct_and_each_reached_by_its_moves() -> None:
    state = daily_start(DEALS[1])
    rules = TableRules.of(state.rules)
    hand, piles = cards_mask(state.hands[0]), table_piles(state.piles)
    positions = turn_positions(rules, hand, piles)
    assert positions[0].moves == ()
    assert len({(position.hand, position.piles) for position in positions}) == len(positions)
    for position in positions:
        reached = hand, piles
        for move in position.moves:
            reached = apply_move(*reached, move)
        assert reached == (position.hand, position.piles)
    assert len(turn_positions(rules, hand, piles, cap=3)) == min(3, len(positions))


def test_line_steps_give_every_move_of_the_hand_along_the_line() -> None:
    deal = DEALS[0]
    par = par_search(deal, node_budget=SMALL_BUDGET)
    steps = list(line_steps(deal, par.line_json()))
    assert tuple(played.move for played in steps if played.seat == 0) == par.moves
    assert {played.seat for played in steps} == {0, 1, 2, 3}
    assert steps[-1].state.to_json() == replay_line(deal, par.moves).state.to_json()
    # Each state is the one before it with the step's move applied.
    state = daily_start(deal)
    for played in steps:
        state, events = step(state, played.move, seat=played.seat)
        assert (state.to_json(), events) == (played.state.to_json(), played.events)
