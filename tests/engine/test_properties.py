"""Invariants over random play under every rule set and 2 to 4 players."""

import itertools
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import (
    DECK,
    END_TURN,
    OPTIONS,
    PILES,
    PLAYING,
    SIDES,
    Move,
    MoveError,
    MovePile,
    Play,
    Rules,
    State,
    apply,
    can_play_a_card,
    legal_moves,
    make_rules,
    move_pile_refusal,
    new_game,
    next_hand,
    parse_move,
    play_refusal,
    position_moves,
    step,
)
from games.engine.cards import sort_key

PlayRandom = Callable[..., Iterator[Any]]


def _every_rule_set() -> list[Rules]:
    combinations = [
        dict(zip(OPTIONS, values, strict=True)) for values in itertools.product(*OPTIONS.values())
    ]
    return [
        make_rules(options)
        for options in combinations
        if not (options["draw"] == "until_playable" and options["draw_timing"] == "end")
    ]


RULE_SETS = _every_rule_set()
EVERY_PLAY_AND_PILE_MOVE: list[Move] = [
    *(Play(card, to) for card in DECK for to in PILES),
    *(MovePile(source, to) for source in PILES for to in PILES),
]

games = st.fixed_dictionaries(
    {
        "rules": st.sampled_from(RULE_SETS),
        "players": st.integers(2, 4),
        "seed": st.binary(min_size=32, max_size=32),
    }
)
policies = st.integers(0, 2**32)


def _start(game: dict[str, Any]) -> State:
    return new_game(target_score=None, **game)[0]


def _cards(state: State) -> list[str]:
    return (
        [card for hand in state.hands for card in hand]
        + state.stock
        + [card for name in PILES for card in state.piles[name]]
    )


def test_every_combination_of_options_but_the_incompatible_one_is_a_rule_set() -> None:
    assert len(RULE_SETS) == 2**7 - 2**5
    assert len(set(RULE_SETS)) == len(RULE_SETS)


@settings(max_examples=60)
@given(game=games, policy=policies)
def test_all_52_cards_are_always_present_and_distinct(
    play_random: PlayRandom, game: dict[str, Any], policy: int
) -> None:
    state = _start(game)
    assert sorted(_cards(state)) == sorted(DECK)
    for record in play_random(state, random.Random(policy)):
        assert sorted(_cards(record.after)) == sorted(DECK)


@settings(max_examples=40)
@given(game=games, policy=policies)
def test_every_listed_legal_move_applies(play_random: PlayRandom, game: dict[str, Any], policy: int) -> None:
    state = _start(game)
    for record in play_random(state, random.Random(policy)):
        moves = legal_moves(record.state)
        assert moves[-1] == END_TURN
        assert len(set(moves)) == len(moves)
        for move in moves:
            apply(record.state, move)


@settings(max_examples=30)
@given(game=games, policy=policies)
def test_every_play_or_pile_move_not_listed_is_refused_with_a_code(
    play_random: PlayRandom, game: dict[str, Any], policy: int
) -> None:
    state = _start(game)
    rng = random.Random(policy)
    for record in play_random(state, rng):
        if rng.random() > 0.1:
            continue
        listed = set(legal_moves(record.state))
        before = record.state.to_json()
        for move in EVERY_PLAY_AND_PILE_MOVE:
            if move in listed:
                continue
            try:
                step(record.state, move)
            except MoveError as refusal:
                assert refusal.code
            else:
                raise AssertionError(f"{move} is not listed but was applied")
        assert record.state.to_json() == before


@settings(max_examples=60)
@given(game=games, policy=policies, target=st.sampled_from([None, 1, 30]))
def test_a_move_leaves_the_state_it_was_made_on_exactly_as_it_was(
    game: dict[str, Any], policy: int, target: int | None
) -> None:
    """A move's state shares the unchanged lists of the one it was made on (State.successor): every listed
    move, a draw, a hand's end and the next hand's deal among them, leaves the earlier state as it was, and
    so does every state before it in the game, each still equal to its own JSON."""
    state = new_game(target_score=target, **game)[0]
    rng = random.Random(policy)
    kept: list[tuple[State, dict[str, Any]]] = []
    for _ in range(400):
        if state.status == "finished":
            break
        if state.status != PLAYING:
            kept.append((state, state.to_json()))
            state = next_hand(state)[0]
            continue
        moves = legal_moves(state)
        before = state.to_json()
        for move in moves:
            apply(state, move)
            assert state.to_json() == before, move
        kept.append((state, before))
        state = apply(state, END_TURN if rng.random() < 0.3 else rng.choice(moves))
    for earlier, seen in kept:
        assert earlier.to_json() == seen
        assert State.from_json(seen) == earlier


@settings(max_examples=60)
@given(game=games, policy=policies, end_turn_chance=st.sampled_from([0.05, 0.3, 0.7, 1.0]))
def test_random_play_ends_every_hand_even_long_after_the_stock_is_empty(
    play_random: PlayRandom, game: dict[str, Any], policy: int, end_turn_chance: float
) -> None:
    state = _start(game)
    steps = 0
    for record in play_random(state, random.Random(policy), end_turn_chance=end_turn_chance):
        state = record.after
        steps += 1
        assert steps < 5000
    assert state.status != PLAYING
    result = state.hand_results[-1]
    if result["reason"] == "blocked":
        assert state.stock == []
        assert all(result["hands"])
    else:
        assert result["out_seat"] is not None and result["hands"][result["out_seat"]] == []


def test_random_play_goes_on_long_after_the_stock_is_empty_and_still_ends_every_hand(
    play_random: PlayRandom,
) -> None:
    longest = 0
    for i in range(40):
        game = {"rules": RULE_SETS[i % len(RULE_SETS)], "players": 2 + i % 3, "seed": i.to_bytes(32, "big")}
        state = _start(game)
        turns_on_empty_stock = 0
        for record in play_random(state, random.Random(i), end_turn_chance=0.3):
            state = record.after
            if record.move == END_TURN and not record.state.stock:
                turns_on_empty_stock += 1
        assert state.status != PLAYING
        longest = max(longest, turns_on_empty_stock)
    assert longest > 12


@settings(max_examples=40)
@given(game=games, policy=policies)
def test_state_round_trips_exactly_through_json(
    play_random: PlayRandom, game: dict[str, Any], policy: int
) -> None:
    state = _start(game)
    for current in [state] + [record.after for record in play_random(state, random.Random(policy))]:
        data = current.to_json()
        text = json.dumps(data)
        restored = State.from_json(json.loads(text))
        assert restored == current
        assert json.dumps(restored.to_json()) == text


@settings(max_examples=40)
@given(game=games, policy=policies)
def test_same_seed_and_same_moves_replay_to_the_same_state(
    play_random: PlayRandom, game: dict[str, Any], policy: int
) -> None:
    state = _start(game)
    moves = []
    for record in play_random(state, random.Random(policy)):
        moves.append(record.move.to_json())
        state = record.after
    replayed = _start(game)
    for data in moves:
        replayed = apply(replayed, parse_move(json.loads(json.dumps(data))))
    assert replayed.to_json() == state.to_json()


@settings(max_examples=300)
@given(
    rules=st.sampled_from(RULE_SETS),
    deck=st.permutations(DECK),
    hand_size=st.integers(0, 12),
    pile_sizes=st.lists(st.integers(0, 3), min_size=len(PILES), max_size=len(PILES)),
)
def test_legal_moves_are_exactly_the_moves_the_refusal_checks_allow_in_fixed_order(
    rules: Rules, deck: list[str], hand_size: int, pile_sizes: list[int]
) -> None:
    hand, rest = deck[:hand_size], deck[hand_size:]
    piles = {}
    for name, size in zip(PILES, pile_sizes, strict=True):
        piles[name], rest = rest[:size], rest[size:]
    expected: list[Move] = [
        Play(card, to)
        for card in sorted(set(hand), key=sort_key)
        for to in PILES
        if play_refusal(rules, piles, card, to) is None
    ]
    expected += [
        MovePile(source, to)
        for source in SIDES
        if piles[source]
        for to in PILES
        if move_pile_refusal(rules, piles, source, to) is None
    ]
    assert position_moves(rules, hand, piles) == expected
    assert can_play_a_card(rules, hand, piles) == any(isinstance(move, Play) for move in expected)
