"""Engine benchmark: moves per CPU-second in random play and between computer players, sharp's decision CPU
time, and the daily par search's CPU, for this checkout's engine (as built: compiled or pure Python) and, side
by side in one run, for other checkouts of it.

    .venv/bin/python bench/engine.py [--seconds 3] [--sharp-hands 12] [--par-days 10] [--rounds 2]
        [--against PATH ...] [--profile random|easy|normal|sharp|par]

The harness, the same for every engine it runs: four-player `classic` hands, each dealt from a seed of a fixed
sequence. Random play chooses uniformly among the legal moves, or ends the turn with chance 0.3 (as an easy
player stops); easy and normal play every seat with that computer level (`play_turn`). A move is one `apply`
of a play, a pile move or an end of turn; its cost includes listing the legal moves (random play) or the
player's whole decision and the observation it decides from (computer players). Sharp decides from every
position of `--sharp-hands` hands among normal players, on its budget alone (no cutoff), so each decision is
the same work in every build. Par searches `--par-days` daily deals at the default node budget.

Each figure is measured in a fresh interpreter per engine (`python -S`, the engine imported from that
checkout alone), the engines taking turns for `--rounds` rounds (the best kept), and each prints a digest of
every choice made: equal digests are the same choices, move for move. `--against` adds checkouts (another
commit's worktree): their engines must be pure Python. This checkout runs twice: as installed (`mypyc` when
compiled) and as pure Python (KINGSCORNER_ENGINE=python). `--profile` runs one workload under cProfile in this
process instead and prints the functions with the largest share of its time (run it with
KINGSCORNER_ENGINE=python to see inside the engine: compiled functions are not seen by the profiler;
`python -S bench/engine.py --profile sharp --checkout PATH` profiles another checkout's engine).
"""

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PLAYERS = 4
# The random policy ends its turn early this often, as an easy computer player does.
END_TURN_CHANCE = 0.3
WORKLOADS = ("random", "easy", "normal", "sharp", "par")
PAR_SECRET = "kingscorner-par-bench"
PAR_FIRST_DAY = date(2026, 1, 1)

Figures = dict[str, Any]


def _seed(kind: str, index: int) -> bytes:
    return hashlib.sha256(f"engine bench {kind} {index}".encode()).digest()


def _moves_per_cpu_second(play_hand: Callable[[int], list[Any]], seconds: float) -> Figures:
    """Plays hands 0, 1, 2, ... until `seconds` of CPU have gone; moves per CPU-second and the digest of the
    choices made in the first 20 hands (written out after the clock stops: it is the harness's work)."""
    first: list[Any] = []
    moves = hands = 0
    started = time.process_time()
    while time.process_time() - started < seconds:
        played = play_hand(hands)
        moves += len(played)
        if hands < 20:
            first.append(played)
        hands += 1
    cpu = time.process_time() - started
    digest = hashlib.sha256()
    for played in first:
        for move in played:
            shown = move if isinstance(move, dict) else move.to_json()
            digest.update(json.dumps(shown, sort_keys=True).encode())
    return {"moves_per_cpu_second": moves / cpu, "hands": hands, "moves": moves, "digest": digest.hexdigest()}


def random_play(seconds: float) -> Figures:
    from games.engine import END_TURN, PLAYING, apply, legal_moves, make_rules, new_game

    rules = make_rules()

    def play_hand(index: int) -> list[Any]:
        rng = random.Random(index)
        state, _ = new_game(rules=rules, players=PLAYERS, seed=_seed("random", index), target_score=None)
        played: list[Any] = []
        while state.status == PLAYING:
            moves = legal_moves(state)
            move = END_TURN if rng.random() < END_TURN_CHANCE else rng.choice(moves)
            state = apply(state, move)
            played.append(move)
        return played

    return _moves_per_cpu_second(play_hand, seconds)


def computer_play(level: str, seconds: float) -> Figures:
    from games.engine import PLAYING, make_rules, new_game
    from games.engine.players import play_turn

    rules = make_rules()

    def play_hand(index: int) -> list[Any]:
        seed = _seed(level, index)
        state, _ = new_game(rules=rules, players=PLAYERS, seed=seed, target_score=None)
        played: list[Any] = []
        while state.status == PLAYING:
            state, events = play_turn(state, level, seed)
            played.extend(event for event in events if event["type"] in ("play", "move_pile", "end_turn"))
        return played

    return _moves_per_cpu_second(play_hand, seconds)


def sharp_decisions(hands: int, profiler: cProfile.Profile | None = None) -> Figures:
    """Sharp's CPU time per decision on every position of `hands` classic hands among normal players, and
    under any_space as many; its budget alone decides (no cutoff)."""
    from games.engine import PLAYING, make_rules, new_game, observe, observe_event
    from games.engine.players import Budget, decide, play_turn, turn_stream

    budget = Budget(cutoff_ms=600_000)
    times: list[int] = []
    digest = hashlib.sha256()
    for rules in ("classic", "any_space"):
        for index in range(hands):
            seed = _seed(f"sharp {rules}", index)
            state, events = new_game(rules=make_rules(rules), players=PLAYERS, seed=seed, target_score=None)
            while state.status == PLAYING:
                seat = state.current_seat
                observation = observe(state, seat)
                history = [observe_event(event, seat) for event in events]
                stream = turn_stream(seed, state.hand_number, seat, state.turn)
                started = time.process_time_ns()
                if profiler is not None:
                    profiler.enable()
                decision = decide(observation, "sharp", stream, history=history, budget=budget)
                if profiler is not None:
                    profiler.disable()
                times.append(time.process_time_ns() - started)
                digest.update(json.dumps([move.to_json() for move in decision.moves]).encode())
                state, played = play_turn(state, "normal", seed)
                events.extend(played)
    times.sort()
    return {
        "decisions": len(times),
        "p50_ms": times[len(times) // 2] / 1e6,
        "p99_ms": times[int(0.99 * (len(times) - 1))] / 1e6,
        "mean_ms": sum(times) / len(times) / 1e6,
        "digest": digest.hexdigest(),
    }


def par_days(days: int, profiler: cProfile.Profile | None = None) -> Figures:
    from games.engine import daily_seed, make_rules
    from games.engine.par import RevealedDeal, par_search

    pars = []
    cpu = 0.0
    for offset in range(days):
        day = PAR_FIRST_DAY + timedelta(days=offset)
        deal = RevealedDeal(daily_seed(PAR_SECRET, day), make_rules("classic"), ("normal",) * 3)
        started = time.process_time()
        if profiler is not None:
            profiler.enable()
        par = par_search(deal)
        if profiler is not None:
            profiler.disable()
        cpu += time.process_time() - started
        pars.append(par.result)
    return {
        "days": days,
        "cpu_ms_per_day": cpu / days * 1e3,
        "mean_par": sum(pars) / days,
        "digest": hashlib.sha256(json.dumps(pars).encode()).hexdigest(),
    }


def run_workload(name: str, options: argparse.Namespace, profiler: cProfile.Profile | None = None) -> Figures:
    if name == "random":
        return random_play(options.seconds)
    if name in ("easy", "normal"):
        return computer_play(name, options.seconds)
    if name == "sharp":
        return sharp_decisions(options.sharp_hands, profiler)
    return par_days(options.par_days, profiler)


def worker(options: argparse.Namespace) -> None:
    """One workload in this interpreter, on the engine of `options.checkout`; prints its figures as JSON."""
    sys.path.insert(0, str(Path(options.checkout).resolve()))
    try:
        figures = run_workload(options.worker, options)
    except ImportError as error:
        figures = {"missing": str(error)}
    from games import engine

    figures["build"] = getattr(engine, "BUILD", "python")
    print(json.dumps(figures))


def profile(name: str, options: argparse.Namespace, top: int = 20) -> None:
    sys.path.insert(0, str(Path(options.checkout).resolve()))
    profiler = cProfile.Profile()
    if name in ("sharp", "par"):
        run_workload(name, options, profiler)
    else:
        profiler.enable()
        run_workload(name, options)
        profiler.disable()
    from games import engine

    stats = pstats.Stats(profiler)
    total = sum(entry[2] for entry in stats.stats.values())  # type: ignore[attr-defined]
    build = getattr(engine, "BUILD", "python")
    print(f"profile of {name} ({build} build, {options.checkout}): {total:.2f} s profiled")
    print(f"{'own %':>6} {'with callees %':>15} {'calls':>10}  function")
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])  # type: ignore[attr-defined]
    for (path, line, function), (_, calls, own, cumulative, _) in rows[:top]:
        where = f"{Path(path).name}:{line}" if line else path
        print(f"{100 * own / total:6.1f} {100 * cumulative / total:15.1f} {calls:10d}  {function} ({where})")


def _engines(against: Sequence[str]) -> list[tuple[str, str, dict[str, str]]]:
    """(label, checkout, environment) of each engine measured: this checkout as built and as pure Python, then
    the other checkouts."""
    plain = {key: value for key, value in os.environ.items() if key != "KINGSCORNER_ENGINE"}
    engines = [("this checkout", str(REPO), plain)]
    engines.append(("this checkout, pure Python", str(REPO), {**plain, "KINGSCORNER_ENGINE": "python"}))
    engines.extend((path, path, plain) for path in against)
    return engines


def side_by_side(options: argparse.Namespace) -> None:
    engines = _engines(options.against)
    arguments = [
        f"--seconds={options.seconds}",
        f"--sharp-hands={options.sharp_hands}",
        f"--par-days={options.par_days}",
    ]
    for workload in options.workloads:
        # Each engine runs `rounds` times, the engines taking turns, and keeps its best round: the machine is
        # shared, and a round another process slowed says nothing of the engine.
        results: list[Figures] = [{} for _ in engines]
        for _ in range(options.rounds):
            for index, (_, checkout, environment) in enumerate(engines):
                command = [sys.executable, "-S", __file__, f"--worker={workload}", f"--checkout={checkout}"]
                completed = subprocess.run(
                    [*command, *arguments],
                    env=environment,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                figures = json.loads(completed.stdout.strip().splitlines()[-1])
                if not results[index] or _better(workload, figures, results[index]):
                    results[index] = figures
        print(f"\n{workload}")
        base = results[0]
        for (label, _, _), figures in zip(engines, results, strict=True):
            if "missing" in figures:
                print(f"  {label}: not in this engine ({figures['missing']})")
                continue
            print(f"  {label} [{figures.pop('build')}]: {_summary(workload, figures, base)}")


def _better(workload: str, figures: Figures, than: Figures) -> bool:
    if "missing" in figures:
        return False
    if workload in ("random", "easy", "normal"):
        return bool(figures["moves_per_cpu_second"] > than["moves_per_cpu_second"])
    if workload == "sharp":
        return bool(figures["p50_ms"] + figures["p99_ms"] < than["p50_ms"] + than["p99_ms"])
    return bool(figures["cpu_ms_per_day"] < than["cpu_ms_per_day"])


def _summary(workload: str, figures: Figures, base: Figures) -> str:
    same = "same choices" if figures["digest"] == base.get("digest") else "other choices"
    if workload in ("random", "easy", "normal"):
        ratio = base["moves_per_cpu_second"] / figures["moves_per_cpu_second"]
        return (
            f"{figures['moves_per_cpu_second']:,.0f} moves per CPU-second ({figures['hands']} hands); "
            f"this checkout does {ratio:.2f}x; {same}"
        )
    if workload == "sharp":
        p50, p99 = figures["p50_ms"], figures["p99_ms"]
        return (
            f"{figures['decisions']} decisions, CPU p50 {p50:.2f} ms, p99 {p99:.2f} ms, mean "
            f"{figures['mean_ms']:.2f} ms; this checkout takes {base['p50_ms'] / p50:.2f}x at p50, "
            f"{base['p99_ms'] / p99:.2f}x at p99; {same}"
        )
    per_day = figures["cpu_ms_per_day"]
    return (
        f"{figures['days']} days, CPU {per_day:.0f} ms a day, mean par {figures['mean_par']:.2f}; this "
        f"checkout takes {base['cpu_ms_per_day'] / per_day:.2f}x; {same}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds of each moves-per-second run")
    parser.add_argument("--sharp-hands", type=int, default=12, help="hands per rule set, sharp")
    parser.add_argument("--par-days", type=int, default=10, help="daily deals for the par search")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each engine, the best kept")
    parser.add_argument(
        "--workloads", type=lambda text: text.split(","), default=list(WORKLOADS), help="comma-separated"
    )
    parser.add_argument("--against", nargs="*", default=[], help="other checkouts to measure beside this one")
    parser.add_argument("--profile", choices=WORKLOADS, help="profile one workload here instead")
    parser.add_argument("--worker", choices=WORKLOADS, help=argparse.SUPPRESS)
    parser.add_argument(
        "--checkout", default=str(REPO), help="with --profile: whose engine to profile (run with -S)"
    )
    options = parser.parse_args(argv)
    if options.worker:
        worker(options)
    elif options.profile:
        profile(options.profile, options)
    else:
        side_by_side(options)


if __name__ == "__main__":
    main()
