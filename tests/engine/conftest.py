"""Engine fixtures: positions built by hand, random play-throughs, and the deal test vectors."""

import json
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from games.engine import END_TURN, PILES, PLAYING, Move, Rules, State, apply, legal_moves, make_rules

VECTORS_PATH = Path(__file__).resolve().parents[1] / "vectors" / "deals.json"


@pytest.fixture(autouse=True, scope="session")
def _celery_tasks_run_in_process() -> None:
    """Overrides the project-wide fixture of the same name: the engine runs without Django or Celery."""


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Overrides the project-wide fixture of the same name: the engine has no cache to clear."""


@pytest.fixture(params=["sha_ni", "portable"])
def sha_blocks(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each of the C extension's SHA-256 block functions in turn (the processor's instructions where it has
    them, else skipped), for the tests of the compiled build's C (test_native.py, test_native_easy.py)."""
    from games.engine import _native

    running = _native.sha_blocks(request.param == "sha_ni")
    if running != request.param:
        _native.sha_blocks(True)
        pytest.skip("this processor has no SHA instructions")
    yield running
    _native.sha_blocks(True)


@pytest.fixture(scope="session")
def vectors() -> dict[str, Any]:
    """tests/vectors/deals.json; missing vectors fail the run, they never skip."""
    if not VECTORS_PATH.is_file():
        pytest.fail(f"the deal test vectors are missing: expected {VECTORS_PATH}")
    data: dict[str, Any] = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    return data


def make_position(
    *,
    hands: Sequence[Sequence[str]],
    piles: Mapping[str, Sequence[str]] | None = None,
    stock: Sequence[str] = (),
    rules: Rules | None = None,
    current_seat: int = 0,
    scores: Sequence[int] | None = None,
    target_score: int | None = None,
) -> State:
    """A hand in play, mid-turn for `current_seat` (whose draw, if any, has been made), laid out by hand."""
    players = len(hands)
    table: dict[str, list[str]] = {name: [] for name in PILES}
    for name, pile in (piles or {}).items():
        table[name] = list(pile)
    return State(
        rules=rules or make_rules(),
        players=players,
        seed="00" * 32,
        target_score=target_score,
        hand_number=1,
        dealer=(current_seat - 1) % players,
        scores=list(scores) if scores is not None else [0] * players,
        hands=[list(hand) for hand in hands],
        stock=list(stock),
        piles=table,
        current_seat=current_seat,
        turn=1,
        turns_taken=[0] * players,
    )


@pytest.fixture(scope="session")
def position() -> Callable[..., State]:
    return make_position


@dataclass(frozen=True)
class Step:
    state: State
    move: Move
    after: State


def random_steps(state: State, rng: random.Random, *, end_turn_chance: float = 0.3) -> Iterator[Step]:
    """Plays the hand in `state` to its end with a random policy that often ends its turn early."""
    while state.status == PLAYING:
        moves = legal_moves(state)
        move = END_TURN if rng.random() < end_turn_chance else rng.choice(moves)
        after = apply(state, move)
        yield Step(state, move, after)
        state = after


@pytest.fixture(scope="session")
def play_random() -> Callable[..., Iterator[Step]]:
    return random_steps


@pytest.fixture(scope="session")
def finish_hand() -> Callable[[State, int], State]:
    """Plays the current hand to its end at random; returns the state once the hand is over."""

    def finish(state: State, policy_seed: int = 0) -> State:
        rng = random.Random(policy_seed)
        for step in random_steps(state, rng):
            state = step.after
        return state

    return finish
