"""The engine's shapes (games/engine/shapes.py) name what it emits: every event, observation, hand result
and move JSON of random games, under every rule set, has the keys of its TypedDict, and every event type
shows up."""

import random
from collections.abc import Mapping
from typing import Any, get_args

import pytest

from games.engine import (
    END_TURN,
    FINISHED,
    PLAYING,
    PRESETS,
    Event,
    HandResult,
    MoveJson,
    Observation,
    legal_moves,
    make_rules,
    new_game,
    next_hand,
    observe,
    observe_event,
    step,
)


def _by_type(union: Any) -> dict[str, Any]:
    """The TypedDicts of a union told apart by `type`, by the literal of their `type`."""
    return {get_args(shape.__annotations__["type"])[0]: shape for shape in get_args(union)}


EVENT_SHAPES = _by_type(Event)
MOVE_SHAPES = _by_type(MoveJson)


def _misfit(value: Mapping[str, object], shape: Any) -> set[str]:
    """The keys `value` lacks or has beyond those of `shape`; empty when it fits."""
    required, optional = set(shape.__required_keys__), set(shape.__optional_keys__)
    return (required - set(value)) | (set(value) - required - optional)


def test_each_event_and_move_type_has_one_shape() -> None:
    assert sorted(EVENT_SHAPES) == sorted(
        ["deal", "turn_start", "draw", "play", "move_pile", "end_turn", "hand_over", "game_over"]
    )
    assert sorted(MOVE_SHAPES) == ["end_turn", "move_pile", "play"]


@pytest.mark.parametrize("rule_set", sorted(PRESETS))
def test_what_random_games_emit_fits_the_shapes(rule_set: str) -> None:
    rng = random.Random(rule_set)
    seen_types: set[str] = set()
    for game in range(3):
        players = 2 + game
        state, events = new_game(
            rules=make_rules(rule_set), players=players, seed=rng.randbytes(32), target_score=25
        )
        while state.status != FINISHED:
            if state.status != PLAYING:
                state, dealt = next_hand(state)
                events += dealt
                continue
            for seat in range(players):
                observation = observe(state, seat)
                assert not _misfit(observation, Observation)
                for move_json in observation["legal_moves"]:
                    assert not _misfit(move_json, MOVE_SHAPES[move_json["type"]]), move_json
                for result in observation["hand_results"]:
                    assert not _misfit(result, HandResult)
            moves = legal_moves(state)
            move = END_TURN if rng.random() < 0.3 else rng.choice(moves)
            state, stepped = step(state, move)
            events += stepped
        for event in events:
            seen_types.add(event["type"])
            assert not _misfit(event, EVENT_SHAPES[event["type"]]), event
            for seat in range(players):
                seen = observe_event(event, seat)
                assert not _misfit(seen, EVENT_SHAPES[seen["type"]]), seen
    assert seen_types == set(EVENT_SHAPES)
