"""`python manage.py simulate`: computer levels against each other, the command line of the simulator
(games.engine.players.simulate): its options, its progress bar and its report as a table or JSON."""

import argparse
import json
from argparse import ArgumentParser
from collections.abc import Callable
from typing import Any, TextIO, cast

from django.core.management.base import BaseCommand, CommandError

from games.engine.players.levels import DEFAULT_BUDGET, LEVELS
from games.engine.players.montecarlo import Budget
from games.engine.players.simulate import simulate
from games.engine.rules import PRESETS


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


class Command(BaseCommand):
    help = "Plays single hands between computer levels and prints win rates, penalties and decision times."

    def add_arguments(self, parser: ArgumentParser) -> None:
        add_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        # The progress bar redraws one line in place, and the report brings its own line ends.
        self.stdout.ending = self.stderr.ending = ""
        try:
            # Django's OutputWrapper writes and flushes as the text stream the engine's runner expects.
            run(options, cast(TextIO, self.stdout), cast(TextIO, self.stderr))
        except ValueError as error:
            raise CommandError(str(error)) from error
