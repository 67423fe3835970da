"""Engine benchmark: random-play four-player hands per second, legal_moves calls per second, and the CPU time
of sharp's decisions (its budget alone, no cutoff) on the positions of hands among normal players.

Run with `python -m games.engine.bench [--seconds N] [--profile]`; it prints figures and asserts nothing.
`--profile` prints where sharp's decisions spend their time (cProfile) as well.
"""

import argparse
import cProfile
import hashlib
import pstats
import random
import time
from collections.abc import Sequence

from games.engine.game import apply, legal_moves, new_game
from games.engine.moves import END_TURN
from games.engine.observe import observe, observe_event
from games.engine.players import Budget, decide, play_turn, turn_stream
from games.engine.rules import make_rules
from games.engine.shapes import Event
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


def sharp_positions(rules: str, hands: int) -> list[tuple[State, list[Event], bytes]]:
    """Every position of `hands` hands among normal players, with the events before it and the game seed."""
    positions = []
    for index in range(hands):
        seed = hashlib.sha256(b"sharp bench" + rules.encode() + bytes([index])).digest()
        state, events = new_game(rules=make_rules(rules), players=PLAYERS, seed=seed, target_score=None)
        while state.status == PLAYING:
            positions.append((state, list(events), seed))
            state, played = play_turn(state, "normal", seed)
            events.extend(played)
    return positions


def sharp_decisions(rules: str, hands: int, profile: bool) -> tuple[int, float, float]:
    """How many decisions sharp made on those positions, with their mean and p99 CPU time in ms. Each decision
    is sharp's budget alone (no cutoff), so the same code makes the same choices and its times compare."""
    budget = Budget(cutoff_ms=60_000)
    times = []
    profiler = cProfile.Profile() if profile else None
    for state, events, seed in sharp_positions(rules, hands):
        seat = state.current_seat
        observation = observe(state, seat)
        history = [observe_event(event, seat) for event in events]
        stream = turn_stream(seed, state.hand_number, seat, state.turn)
        started = time.process_time_ns()
        if profiler is not None:
            profiler.enable()
        decide(observation, "sharp", stream, history=history, budget=budget)
        if profiler is not None:
            profiler.disable()
        times.append(time.process_time_ns() - started)
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
    times.sort()
    return len(times), sum(times) / len(times) / 1e6, times[int(0.99 * (len(times) - 1))] / 1e6


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=3.0, help="how long to run each measurement")
    parser.add_argument(
        "--sharp-hands", type=int, default=20, help="hands of positions for sharp's decisions"
    )
    parser.add_argument("--profile", action="store_true", help="profile sharp's decisions (cProfile)")
    args = parser.parse_args(argv)
    print(f"random-play four-player hands per second: {hands_per_second(args.seconds):.1f}")
    print(f"legal_moves calls per second: {legal_moves_per_second(args.seconds):.0f}")
    for rules in ("classic", "any_space"):
        count, mean, p99 = sharp_decisions(rules, args.sharp_hands, args.profile)
        print(f"sharp's decisions ({rules}, {count}, no cutoff): CPU mean {mean:.2f} ms, p99 {p99:.2f} ms")


if __name__ == "__main__":
    main()
