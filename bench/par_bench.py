"""Daily par over consecutive daily deals: time per day, how par is reached, and par against normal and sharp.

Derives the days' seeds as days before the first season are (`daily_seed`, the HMAC of a fixed bench secret
and consecutive dates; kept so that the figures stay comparable across runs), deals
each as a daily game (classic rules, three normal opponents) and runs the par search at its budget. It prints:
the search's time per day (p50, p99, worst) and how often it used its whole budget; how often par goes out
first or stops with the hand unfinished; mean par; par against the results of normal and sharp playing the
same deal from seat 0 (par is never below the better of them; by how much above on average); and, on the
first `--scaling-days` deals, par at a tenth of the budget, the budget and ten times it.

    nice -n 10 .venv/bin/python bench/par_bench.py [--days 200] [--scaling-days 50] [--node-budget N]
"""

import argparse
import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.engine import daily_seed, make_rules  # noqa: E402
from games.engine.par import DEFAULT_NODE_BUDGET, Par, RevealedDeal, level_line, par_search, replay_line  # noqa: E402

BENCH_SECRET = "kingscorner-par-bench"
FIRST_DAY = date(2026, 1, 1)
OPPONENT_LEVEL = "normal"


@dataclass(frozen=True, slots=True)
class DayRun:
    day: date
    par: Par
    seconds: float
    cpu_seconds: float
    normal: int
    sharp: int


def deal_of(day: date) -> RevealedDeal:
    return RevealedDeal(daily_seed(BENCH_SECRET, day), make_rules("classic"), (OPPONENT_LEVEL,) * 3)


def run_day(day: date, node_budget: int) -> DayRun:
    deal = deal_of(day)
    started, cpu_started = time.perf_counter(), time.process_time()
    par = par_search(deal, node_budget=node_budget)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    normal, sharp = (replay_line(deal, level_line(deal, level)).result for level in ("normal", "sharp"))
    return DayRun(day, par, seconds, cpu_seconds, normal, sharp)


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]


def report_days(runs: list[DayRun], node_budget: int) -> None:
    seconds = [run.seconds for run in runs]
    cpu_seconds = [run.cpu_seconds for run in runs]
    pars = [run.par.result for run in runs]
    best_level = [max(run.normal, run.sharp) for run in runs]
    margins = [par - best for par, best in zip(pars, best_level, strict=True)]
    count = len(runs)
    print(f"{count} daily deals from {runs[0].day} (secret {BENCH_SECRET!r}), node budget {node_budget}")
    print(
        f"  time per day: p50 {percentile(seconds, 0.5):.2f} s, p99 {percentile(seconds, 0.99):.2f} s, "
        f"worst {max(seconds):.2f} s (CPU time p50 {percentile(cpu_seconds, 0.5):.2f} s, "
        f"p99 {percentile(cpu_seconds, 0.99):.2f} s, worst {max(cpu_seconds):.2f} s)"
    )
    print(
        f"  whole budget used on {sum(run.par.budget_reached for run in runs)} days, "
        f"mean nodes {statistics.mean(run.par.nodes for run in runs):.0f}"
    )
    out_first = sum(run.par.finished and run.par.result > 0 for run in runs)
    stopped = sum(not run.par.finished for run in runs)
    print(
        f"  par goes out first on {out_first} ({out_first / count:.0%}); stops with the hand unfinished on "
        f"{stopped}; mean par {statistics.mean(pars):+.2f}, median {statistics.median(pars):+.0f}, "
        f"mean turns {statistics.mean(run.par.turns for run in runs):.1f}"
    )
    for level in ("normal", "sharp"):
        results = [getattr(run, level) for run in runs]
        print(
            f"  {level} in seat 0: mean {statistics.mean(results):+.2f}, "
            f"goes out first on {sum(result > 0 for result in results)}"
        )
    methods = {
        method: sum(run.par.method == method for run in runs) for method in ("beam", "normal", "sharp")
    }
    below, above = sum(margin < 0 for margin in margins), sum(margin > 0 for margin in margins)
    print(
        f"  par below the better of normal and sharp on {below} deals; above on {above}, "
        f"equal on {count - below - above}; "
        f"mean margin {statistics.mean(margins):+.2f}; par found by {methods}"
    )


def run_days(days: list[date], node_budget: int, known: dict[date, DayRun]) -> list[DayRun]:
    """Each day's run at `node_budget`, reusing those already made; progress on stderr."""
    runs = []
    for number, day in enumerate(days, start=1):
        runs.append(known[day] if day in known else run_day(day, node_budget))
        print(f"\r  budget {node_budget}: {number}/{len(days)} days", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return runs


def report_scaling(days: list[date], node_budget: int, known: dict[date, DayRun]) -> None:
    budgets = [max(1, node_budget // 10), node_budget, node_budget * 10]
    print(f"par by node budget on the first {len(days)} deals")
    print(
        f"  {'budget':>8} {'mean par':>9} {'out first':>10} {'below default':>14} {'above default':>14}"
        f" {'s p50':>7} {'s worst':>8} {'CPU s p50':>10}",
        flush=True,
    )
    default_runs = run_days(days, node_budget, known)
    default = [run.par.result for run in default_runs]
    for budget in budgets:
        runs = default_runs if budget == node_budget else run_days(days, budget, {})
        pars = [run.par.result for run in runs]
        seconds = [run.seconds for run in runs]
        cpu_seconds = [run.cpu_seconds for run in runs]
        print(
            f"  {budget:>8} {statistics.mean(pars):>+9.2f} {sum(par > 0 for par in pars):>10} "
            f"{sum(par < base for par, base in zip(pars, default, strict=True)):>14} "
            f"{sum(par > base for par, base in zip(pars, default, strict=True)):>14} "
            f"{percentile(seconds, 0.5):>7.2f} {max(seconds):>8.2f} {percentile(cpu_seconds, 0.5):>10.2f}",
            flush=True,
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--days", type=int, default=200, help="how many consecutive daily deals")
    parser.add_argument(
        "--scaling-days", type=int, default=50, help="deals for the budget comparison; 0 skips"
    )
    parser.add_argument(
        "--node-budget", type=int, default=DEFAULT_NODE_BUDGET, help="the search's node budget"
    )
    parser.add_argument("--first-day", type=date.fromisoformat, default=FIRST_DAY, help="the first date")
    options = parser.parse_args(argv)
    days = [options.first_day + timedelta(days=offset) for offset in range(options.days)]
    runs = run_days(days, options.node_budget, {})
    if runs:
        report_days(runs, options.node_budget)
    if options.scaling_days:
        scaling = [options.first_day + timedelta(days=offset) for offset in range(options.scaling_days)]
        report_scaling(scaling, options.node_budget, {run.day: run for run in runs})


if __name__ == "__main__":
    main()
