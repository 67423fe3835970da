"""What a seat may see: its own hand and the table, never another hand, the stock's order or the seed."""

import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import (
    END_TURN,
    PILES,
    PLAYING,
    State,
    make_rules,
    new_game,
    next_hand,
    observe,
    observe_event,
    step,
)

PlayRandom = Callable[..., Iterator[Any]]
RULE_CHOICES: list[Any] = [
    "classic",
    "casual",
    "any_space",
    {"draw": "until_playable"},
    {"draw_timing": "end"},
]


def _hidden_from(state: State, seat: int) -> set[str]:
    return {card for other, hand in enumerate(state.hands) if other != seat for card in hand} | set(
        state.stock
    )


def test_observation_holds_own_hand_table_stock_count_hand_counts_and_scores() -> None:
    state, _ = new_game(rules=make_rules(), players=3, seed=bytes(32), target_score=25)
    for seat in range(3):
        seen = observe(state, seat)
        assert seen["seat"] == seat
        assert seen["hand"] == state.hands[seat]
        assert seen["piles"] == {name: state.piles[name] for name in PILES}
        assert seen["stock"] == len(state.stock)
        assert seen["hand_counts"] == [8, 7, 7]
        assert seen["scores"] == [0, 0, 0]
        assert seen["current_seat"] == 0
        assert bool(seen["legal_moves"]) == (seat == 0)
        assert not {"hands", "seed", "seed_scheme"} & set(seen)


def test_observing_a_seat_outside_the_game_is_refused() -> None:
    state, _ = new_game(rules=make_rules(), players=2, seed=bytes(32), target_score=None)
    with pytest.raises(ValueError):
        observe(state, 2)


@settings(max_examples=25)
@given(
    rules=st.sampled_from(RULE_CHOICES),
    players=st.integers(2, 4),
    seed=st.binary(min_size=32, max_size=32),
    policy=st.integers(0, 2**32),
)
def test_no_card_of_another_hand_or_of_the_stock_nor_the_seed_is_ever_observed_while_the_hand_is_in_play(
    play_random: PlayRandom, rules: Any, players: int, seed: bytes, policy: int
) -> None:
    state, _ = new_game(rules=make_rules(rules), players=players, seed=seed, target_score=None)
    rng = random.Random(policy)
    states = [state] + [record.after for record in play_random(state, rng)]
    for current in states:
        if current.status != PLAYING:
            continue
        for seat in range(players):
            text = json.dumps(observe(current, seat))
            assert seed.hex() not in text
            assert current.seed not in text
            leaked = {card for card in _hidden_from(current, seat) if f'"{card}"' in text}
            assert leaked == set()


def test_observe_event_hides_the_card_another_seat_draws() -> None:
    state, _ = new_game(rules=make_rules(), players=3, seed=bytes(32), target_score=None)
    state, events = step(state, END_TURN)
    draws = [event for event in events if event["type"] == "draw"]
    assert [draw["seat"] for draw in draws] == [1]
    card = draws[0]["card"]
    assert observe_event(draws[0], 1) == draws[0]
    for seat in (0, 2):
        seen = observe_event(draws[0], seat)
        assert "card" not in seen
        assert seen == {"type": "draw", "seat": 1, "stock": draws[0]["stock"]}
        assert card not in json.dumps([observe_event(event, seat) for event in events])


def test_later_hands_show_finished_hands_results_but_nothing_hidden_in_the_hand_in_play(
    play_random: PlayRandom,
) -> None:
    state, _ = new_game(rules=make_rules(), players=4, seed=bytes(32), target_score=1000)
    rng = random.Random(2)
    for record in play_random(state, rng):
        state = record.after
    state, _ = next_hand(state)
    for record in play_random(state, rng):
        current = record.state
        for seat in range(4):
            seen = observe(current, seat)
            assert seen["hand_results"] == current.hand_results[:1]
            text = json.dumps({key: value for key, value in seen.items() if key != "hand_results"})
            assert not {card for card in _hidden_from(current, seat) if f'"{card}"' in text}
