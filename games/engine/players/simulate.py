"""The simulator: many single hands between computer levels, with win rates, penalties and decision times.

Run through `python manage.py simulate --hands 2000 --seats sharp,normal,normal,normal --rules classic
--seed 7 [--json]` (games/management/commands/simulate.py, its command line).
"""

import hashlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from games.engine.game import new_game
from games.engine.players.levels import DEFAULT_BUDGET, computer_steps
from games.engine.players.montecarlo import Budget
from games.engine.players.turns import Decision
from games.engine.rules import PRESETS, make_rules
from games.engine.shapes import Event

# A hand that is not over after this many turns is a bug in the engine or the players, not a long hand: each
# turn draws from the stock until it is empty, and after that every trip round the table plays a card or ends
# the hand.
MAX_TURNS = 1000
Z_95 = 1.959963984540054


class HandDidNotEnd(RuntimeError):
    pass


@dataclass(slots=True)
class LevelTally:
    seats: int
    seat_hands: int = 0
    wins: float = 0.0
    penalty: int = 0
    decision_ns: list[int] = field(default_factory=list)
    decision_cpu_ns: list[int] = field(default_factory=list)
    budget_hits: int = 0
    cutoffs: int = 0
    play_outs: int = 0


def seating(levels: Sequence[str], index: int) -> list[str]:
    """The seats of hand `index`: the levels rotated by `index`, so each level plays each seat in turn."""
    return [levels[(seat + index) % len(levels)] for seat in range(len(levels))]


def hand_game_seed(seed: bytes, index: int) -> bytes:
    return hashlib.sha256(seed + b"simulate" + index.to_bytes(4, "big")).digest()


def wilson_interval(successes: float, trials: int) -> tuple[float, float]:
    """The Wilson score interval at 95% for a proportion."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + Z_95**2 / trials
    centre = (p + Z_95**2 / (2 * trials)) / denominator
    margin = Z_95 * math.sqrt(p * (1 - p) / trials + Z_95**2 / (4 * trials**2)) / denominator
    return max(0.0, centre - margin), min(1.0, centre + margin)


def percentile(sorted_values: Sequence[int], fraction: float) -> float:
    """The nearest-rank percentile of already sorted values."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return float(sorted_values[rank - 1])


def play_hand(
    seats: Sequence[str], rules_name: str, game_seed: bytes, tallies: dict[str, LevelTally], budget: Budget
) -> None:
    """Plays one hand through the players' one computer-turn loop (computer_steps), every move through the
    engine's `step`, and adds its outcome to the tallies. Each player is given its own seat's observation and
    the hand's events as that seat saw them. A decision's time is from the loop's resumption (once the last
    move before it was played) to the decision."""
    state, events = new_game(
        rules=make_rules(rules_name), players=len(seats), seed=game_seed, target_score=None
    )
    hand_events: list[Event] = list(events)
    turns = 0
    started = [time.perf_counter_ns(), time.process_time_ns()]

    def decided(seat: int, decision: Decision) -> None:
        nonlocal turns
        turns += 1
        if turns > MAX_TURNS:
            raise HandDidNotEnd(f"hand with game seed {game_seed.hex()} passed {MAX_TURNS} turns")
        tally = tallies[seats[seat]]
        tally.decision_ns.append(time.perf_counter_ns() - started[0])
        tally.decision_cpu_ns.append(time.process_time_ns() - started[1])
        tally.budget_hits += decision.budget_reached
        tally.cutoffs += decision.cut_off
        tally.play_outs += decision.play_outs

    every_seat = dict(enumerate(seats))
    for played in computer_steps(state, every_seat, game_seed, hand_events, budget=budget, decided=decided):
        state = played.state
        started = [time.perf_counter_ns(), time.process_time_ns()]
    result = state.hand_results[-1]
    penalties: list[int] = result["penalties"]
    lowest = min(penalties)
    winners = [seat for seat, penalty in enumerate(penalties) if penalty == lowest]
    for seat, level in enumerate(seats):
        tally = tallies[level]
        tally.seat_hands += 1
        tally.penalty += penalties[seat]
        if seat in winners:
            tally.wins += 1 / len(winners)


def simulate(
    *,
    hands: int,
    seats: Sequence[str],
    rules: str = "classic",
    seed: bytes = b"\x00" * 8,
    budget: Budget = DEFAULT_BUDGET,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Plays `hands` single hands, hand i seating the levels rotated by i, and returns the report.

    A hand is won by the player who goes out; a blocked hand by the players with the lowest penalty, who
    share it equally. A level's win rate is its seats' wins over hands × its seats, so parity is 1/players."""
    if rules not in PRESETS:
        raise ValueError(f"unknown rule set {rules!r}; the rule sets are {', '.join(PRESETS)}")
    tallies = {level: LevelTally(seats=seats.count(level)) for level in dict.fromkeys(seats)}
    for index in range(hands):
        play_hand(seating(seats, index), rules, hand_game_seed(seed, index), tallies, budget)
        if progress is not None:
            progress(index + 1, hands)
    levels: dict[str, Any] = {}
    for level, tally in tallies.items():
        times = sorted(tally.decision_ns)
        cpu_times = sorted(tally.decision_cpu_ns)
        low, high = wilson_interval(tally.wins, tally.seat_hands)
        levels[level] = {
            "seats": tally.seats,
            "wins": round(tally.wins, 3),
            "win_rate": round(tally.wins / tally.seat_hands, 4) if tally.seat_hands else 0.0,
            "win_rate_ci95": [round(low, 4), round(high, 4)],
            "mean_penalty": round(tally.penalty / tally.seat_hands, 3) if tally.seat_hands else 0.0,
            "decision_ms_p50": round(percentile(times, 0.50) / 1e6, 3),
            "decision_ms_p99": round(percentile(times, 0.99) / 1e6, 3),
            "decision_ms_max": round(percentile(times, 1.0) / 1e6, 3),
            # The process's CPU time per decision: on a busy machine, what the decisions would take alone.
            "decision_cpu_ms_p50": round(percentile(cpu_times, 0.50) / 1e6, 3),
            "decision_cpu_ms_p99": round(percentile(cpu_times, 0.99) / 1e6, 3),
            "decision_cpu_ms_max": round(percentile(cpu_times, 1.0) / 1e6, 3),
            "decisions": len(times),
            "budget_hits": tally.budget_hits,
            "cutoffs": tally.cutoffs,
            "play_outs": tally.play_outs,
        }
    return {"hands": hands, "budget": asdict(budget), "levels": levels}
