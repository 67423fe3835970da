"""The simulator: its report, its seating and seeds, and its guard against a hand that never ends."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from games.engine.players import Budget
from games.engine.players import simulate as simulator
from games.engine.players.simulate import HandDidNotEnd, seating, simulate
from games.management.commands.simulate import parse_seats, parse_seed, progress_bar

REPO = Path(__file__).resolve().parents[2]
LEVEL_FIELDS = {
    "seats",
    "wins",
    "win_rate",
    "mean_penalty",
    "decision_ms_p50",
    "decision_ms_p99",
    "decision_cpu_ms_p50",
    "decision_cpu_ms_p99",
    "budget_hits",
    "cutoffs",
    "play_outs",
}
# Where runs are compared, sharp decides by its budget of work alone, never by the clock.
NO_CUTOFF = Budget(samples=8, cutoff_ms=60_000)


def test_the_report_has_the_documented_json_shape() -> None:
    report = simulate(hands=8, seats=["sharp", "normal", "normal", "normal"], seed=b"shape")
    assert set(report) == {"hands", "budget", "levels"}
    assert report["hands"] == 8
    assert report["budget"]["samples"] == Budget().samples
    assert set(report["levels"]) == {"sharp", "normal"}
    for level, row in report["levels"].items():
        assert LEVEL_FIELDS <= set(row)
        assert row["seats"] == (1 if level == "sharp" else 3)
        assert row["win_rate"] == pytest.approx(row["wins"] / (8 * row["seats"]), abs=1e-4)
        assert row["decision_ms_p50"] <= row["decision_ms_p99"]
        assert row["decision_cpu_ms_p50"] <= row["decision_cpu_ms_p99"] <= row["decision_cpu_ms_max"]
        assert row["mean_penalty"] >= 0
    assert sum(row["wins"] for row in report["levels"].values()) == pytest.approx(8)
    assert report["levels"]["normal"]["budget_hits"] == 0
    assert report["levels"]["normal"]["cutoffs"] == report["levels"]["normal"]["play_outs"] == 0
    assert report["levels"]["sharp"]["play_outs"] > 0
    json.dumps(report)


def _simulate(*argv: str) -> tuple[str, str]:
    """`manage.py simulate` with these options, in this process: what it wrote to stdout and to stderr."""
    out, err = io.StringIO(), io.StringIO()
    call_command("simulate", *argv, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_json_report_counts_the_decisions_the_time_cutoff_cut_short() -> None:
    out, _ = _simulate(
        "--hands", "4", "--seats", "sharp,normal,normal", "--seed", "3", "--cutoff-ms", "0", "--json"
    )
    report = json.loads(out)
    assert report["budget"]["cutoff_ms"] == 0
    sharp = report["levels"]["sharp"]
    assert 0 < sharp["cutoffs"] <= sharp["decisions"]
    assert sharp["play_outs"] == 0
    assert report["levels"]["normal"]["cutoffs"] == 0


def test_command_line_prints_one_json_object_and_the_progress_bar_on_stderr() -> None:
    out, err = _simulate(
        "--hands", "4", "--seats", "normal,easy", "--rules", "casual", "--seed", "ff07", "--json"
    )
    report = json.loads(out)
    assert report["hands"] == 4
    assert set(report["levels"]) == {"normal", "easy"}
    assert "4/4 hands" in err


def test_command_line_prints_a_table_by_default() -> None:
    out, _ = _simulate("--hands", "3", "--seats", "sharp,easy,easy", "--seed", "7")
    assert "win rate" in out and "95% interval" in out and "budget hits" in out and "cutoffs" in out
    assert out.splitlines()[-2].startswith("sharp") and out.splitlines()[-1].startswith("easy")


def test_each_level_plays_each_seat_in_turn() -> None:
    levels = ["sharp", "normal", "easy"]
    for seat in range(3):
        assert sorted(seating(levels, index)[seat] for index in range(3)) == sorted(levels)
    assert seating(levels, 0) == levels
    assert seating(levels, 1) == ["normal", "easy", "sharp"]


def test_the_same_seed_gives_the_same_hands() -> None:
    def outcome(seed: bytes) -> dict[str, tuple[float, float]]:
        report = simulate(hands=6, seats=["sharp", "easy", "normal"], seed=seed, budget=NO_CUTOFF)
        return {level: (row["wins"], row["mean_penalty"]) for level, row in report["levels"].items()}

    assert outcome(b"same") == outcome(b"same")


def test_seeds_are_decimal_or_hexadecimal() -> None:
    assert parse_seed("7") == (7).to_bytes(8, "big")
    assert parse_seed("0xff00") == parse_seed("ff00") == b"\xff\x00"
    with pytest.raises(ValueError):
        parse_seed("not a seed")


def test_seats_are_two_to_four_known_levels() -> None:
    assert parse_seats("sharp, normal") == ["sharp", "normal"]
    for text in ("sharp", "sharp,normal,normal,normal,easy", "sharp,expert"):
        with pytest.raises(ValueError):
            parse_seats(text)


def test_a_hand_that_does_not_end_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simulator, "MAX_TURNS", 1)
    with pytest.raises(HandDidNotEnd):
        simulate(hands=1, seats=["easy", "easy"], seed=b"guard")


def test_the_simulator_runs_without_django() -> None:
    code = (
        "import json, sys\n"
        "from games.engine.players.simulate import simulate\n"
        "simulate(hands=1, seats=['sharp', 'normal'])\n"
        "print(json.dumps(sorted(name for name in sys.modules if name.startswith('django'))))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(completed.stdout) == []


def test_choices_do_not_depend_on_the_interpreter_hash_seed() -> None:
    code = (
        "import json\n"
        "from games.engine.players import Budget\n"
        "from games.engine.players.simulate import simulate\n"
        "report = simulate(hands=12, seats=['sharp', 'normal', 'easy', 'sharp'], rules='casual', seed=b'h',\n"
        "                  budget=Budget(samples=4, cutoff_ms=60_000))\n"
        "print(json.dumps({k: [v['wins'], v['mean_penalty']] for k, v in report['levels'].items()}))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        ).stdout
        for hash_seed in ("1", "2", "3")
    }
    assert len(outputs) == 1


def test_the_management_command_is_a_thin_wrapper() -> None:
    completed = subprocess.run(
        [sys.executable, "manage.py", "simulate", "--hands", "2", "--seats", "sharp,normal", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(completed.stdout)["hands"] == 2
    assert "2/2 hands" in completed.stderr


def test_progress_bar_redraws_one_line() -> None:
    stream = io.StringIO()
    update = progress_bar(stream, width=4)
    for done in range(1, 9):
        update(done, 8)
    assert stream.getvalue().count("\n") == 1
    assert stream.getvalue().endswith("[####] 8/8 hands\n")


def test_the_play_outs_own_turn_budget_and_pruning_are_set_from_the_command_line() -> None:
    out, _ = _simulate(
        *("--hands", "1", "--seats", "sharp,normal", "--seed", "5", "--play-out-node-budget", "40"),
        *("--prune", "0", "--samples", "2", "--cutoff-ms", "60000", "--json"),
    )
    budget = json.loads(out)["budget"]
    assert budget["play_out_node_budget"] == 40
    assert budget["prune"] == 0
    assert budget["samples"] == 2
