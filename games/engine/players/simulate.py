"""The simulator: many single hands between computer levels, with win rates, penalties and decision times.

Run as `python -m games.engine.players.simulate --hands 2000 --seats sharp,normal,normal,normal --rules
classic --seed 7 [--json]`, or through `python manage.py simulate` with the same options.
"""

import argparse
import hashlib
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO

from games.engine.game import new_game
from games.engine.players.levels import DEFAULT_BUDGET, LEVELS, computer_turn
from games.engine.players.montecarlo import Budget
from games.engine.rules import PRESETS, make_rules
from games.engine.shapes import Event
from games.engine.state import PLAYING

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


def parse_seed(text: str) -> bytes:
    """A simulation seed: a decimal integer, or hexadecimal (with or without 0x)."""
    cleaned = text.strip().lower()
    if cleaned.isdigit():
        value = int(cleaned)
        return value.to_bytes(max(8, (value.bit_length() + 7) // 8), "big")
    digits = cleaned.removeprefix("0x")
    if len(digits) % 2:
        digits = "0" + digits
    try:
        return bytes.fromhex(digits)
    except ValueError:
        raise ValueError(f"a seed is a decimal integer or hexadecimal, not {text!r}") from None


def parse_seats(text: str) -> list[str]:
    seats = [level.strip() for level in text.split(",")]
    unknown = [level for level in seats if level not in LEVELS]
    if unknown:
        raise ValueError(f"unknown level(s) {', '.join(unknown)}; the levels are {', '.join(LEVELS)}")
    if not 2 <= len(seats) <= 4:
        raise ValueError("a hand has 2 to 4 seats")
    return seats


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
    """Plays one hand, every move through the engine's `step`, and adds its outcome to the tallies. Each
    player is given its own seat's observation and the hand's events as that seat saw them."""
    state, events = new_game(
        rules=make_rules(rules_name), players=len(seats), seed=game_seed, target_score=None
    )
    hand_events: list[Event] = list(events)
    turns = 0
    while state.status == PLAYING:
        turns += 1
        if turns > MAX_TURNS:
            raise HandDidNotEnd(f"hand with game seed {game_seed.hex()} passed {MAX_TURNS} turns")
        level = seats[state.current_seat]
        started, started_cpu = time.perf_counter_ns(), time.process_time_ns()
        decision, steps = computer_turn(state, level, game_seed, hand_events, budget=budget)
        tally = tallies[level]
        tally.decision_ns.append(time.perf_counter_ns() - started)
        tally.decision_cpu_ns.append(time.process_time_ns() - started_cpu)
        tally.budget_hits += decision.budget_reached
        tally.cutoffs += decision.cut_off
        tally.play_outs += decision.play_outs
        for played in steps:
            state = played.state
            hand_events.extend(played.events)
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


def format_table(report: dict[str, Any]) -> str:
    header = (
        f"{'level':<8}{'seats':>6}{'wins':>10}{'win rate':>10}  {'95% interval':<16}{'mean pen.':>10}"
        f"{'ms p50':>9}{'ms p99':>9}{'ms max':>9}{'cpu p99':>9}{'decisions':>11}{'budget hits':>13}"
        f"{'cutoffs':>9}"
    )
    budget = report["budget"]
    lines = [
        f"{report['hands']} hands, sharp's budget: {budget['node_budget']} nodes, {budget['candidates']} "
        f"candidates × up to {budget['samples']} samples, work {budget['work']}, "
        f"{budget['play_out_node_budget']} nodes a turn in play-outs, prune {budget['prune']}, "
        f"cutoff {budget['cutoff_ms']} ms",
        header,
        "-" * len(header),
    ]
    for level, row in report["levels"].items():
        low, high = row["win_rate_ci95"]
        lines.append(
            f"{level:<8}{row['seats']:>6}{row['wins']:>10.1f}{row['win_rate']:>10.1%}  "
            f"{f'{low:.1%}–{high:.1%}':<16}{row['mean_penalty']:>10.2f}{row['decision_ms_p50']:>9.2f}"
            f"{row['decision_ms_p99']:>9.2f}{row['decision_ms_max']:>9.2f}{row['decision_cpu_ms_p99']:>9.2f}"
            f"{row['decisions']:>11}"
            f"{row['budget_hits']:>13}{row['cutoffs']:>9}"
        )
    return "\n".join(lines)


def progress_bar(stream: TextIO, width: int = 40) -> Callable[[int, int], None]:
    """A text progress bar, redrawn in place on `stream` whenever another 1/width of the run is done."""
    shown = [-1]

    def update(done: int, total: int) -> None:
        filled = width * done // total
        if filled == shown[0] and done != total:
            return
        shown[0] = filled
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} hands")
        if done == total:
            stream.write("\n")
        stream.flush()

    return update


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hands", type=int, default=1000, help="how many single hands to play")
    parser.add_argument(
        "--seats", default="sharp,normal,normal,normal", help="2 to 4 levels, comma-separated"
    )
    parser.add_argument("--rules", default="classic", choices=sorted(PRESETS), help="the rule set")
    parser.add_argument("--seed", default="0", help="the run's seed: a decimal integer or hexadecimal")
    parser.add_argument(
        "--node-budget", type=int, default=DEFAULT_BUDGET.node_budget, help="sharp's search's node budget"
    )
    parser.add_argument(
        "--candidates",
        type=int,
        default=DEFAULT_BUDGET.candidates,
        help="how many of its search's best end positions sharp plays out",
    )
    parser.add_argument(
        "--samples", type=int, default=DEFAULT_BUDGET.samples, help="how many sampled deals sharp plays out"
    )
    parser.add_argument(
        "--work",
        type=int,
        default=DEFAULT_BUDGET.work,
        help="sharp's work per decision, in positions searched or moved through",
    )
    parser.add_argument(
        "--play-out-node-budget",
        type=int,
        default=DEFAULT_BUDGET.play_out_node_budget,
        help="the node budget of sharp's own later turns in its play-outs",
    )
    parser.add_argument(
        "--prune",
        type=float,
        default=DEFAULT_BUDGET.prune,
        help="how many wins behind the leader a candidate of sharp's is played out no further (0: never)",
    )
    parser.add_argument(
        "--cutoff-ms",
        type=float,
        default=DEFAULT_BUDGET.cutoff_ms,
        help="sharp's wall-clock safety valve per decision, in milliseconds",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def run(options: dict[str, Any], out: TextIO, err: TextIO) -> None:
    """Runs a simulation from parsed options, the progress bar on `err` and the report on `out`."""
    if options["hands"] < 1:
        raise ValueError("--hands must be at least 1")
    report = simulate(
        hands=options["hands"],
        seats=parse_seats(options["seats"]),
        rules=options["rules"],
        seed=parse_seed(str(options["seed"])),
        budget=Budget(
            node_budget=options["node_budget"],
            candidates=options["candidates"],
            samples=options["samples"],
            work=options["work"],
            play_out_node_budget=options["play_out_node_budget"],
            prune=options["prune"],
            cutoff_ms=options["cutoff_ms"],
        ),
        progress=progress_bar(err),
    )
    if options["json"]:
        out.write(json.dumps(report) + "\n")
    else:
        out.write(format_table(report) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m games.engine.players.simulate", description=__doc__)
    add_arguments(parser)
    options = parser.parse_args(argv)
    try:
        run(vars(options), sys.stdout, sys.stderr)
    except ValueError as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
