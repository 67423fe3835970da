"""Engine benchmark: random-play four-player hands per second and legal_moves calls per second.

Run with `python -m games.engine.bench [--seconds N]`; it prints figures and asserts nothing.
"""

import argparse
import random
import time
from collections.abc import Sequence

from games.engine.game import apply, legal_moves, new_game
from games.engine.moves import END_TURN
from games.engine.rules import make_rules
from games.engine.state import PLAYING, State

PLAYERS = 4
# The random policy ends its turn early this often, as an easy computer player does.
END_TURN_CHANCE = 0.3


def random_hand(seed: bytes, rng: random.Random) -> list[State]:
    """Plays one classic four-player hand at random; returns every position in which a move was chosen."""
    state, _ = new_game(rules=make_rules(), players=PLAYERS, seed=seed, target_score=None)
    positions = []
    while state.status == PLAYING:
        positions.append(state)
        moves = legal_moves(state)
        state = apply(state, END_TURN if rng.random() < END_TURN_CHANCE else rng.choice(moves))
    return positions


def hands_per_second(seconds: float) -> float:
    rng = random.Random(0)
    hands = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        random_hand(rng.randbytes(32), rng)
        hands += 1
    return hands / (time.perf_counter() - started)


def legal_moves_per_second(seconds: float) -> float:
    rng = random.Random(1)
    positions = [position for _ in range(20) for position in random_hand(rng.randbytes(32), rng)]
    calls = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        for position in positions:
            legal_moves(position)
        calls += len(positions)
    return calls / (time.perf_counter() - started)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=3.0, help="how long to run each measurement")
    args = parser.parse_args(argv)
    print(f"random-play four-player hands per second: {hands_per_second(args.seconds):.1f}")
    print(f"legal_moves calls per second: {legal_moves_per_second(args.seconds):.0f}")


if __name__ == "__main__":
    main()
