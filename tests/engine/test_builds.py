"""The compiled engine and the pure-Python one make the same choices, move for move: a seeded simulation of
every level (sharp on its budget alone, so that no clock decides) is played in each build and compared. The
compiled build plays sharp's search and its play-outs in C (_search_native.c), and lists the legal moves and
shuffles in C (_native.c); the pure one does all of it in Python."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SIMULATION = """
import hashlib, json, sys
from games.engine import BUILD, PLAYING, make_rules, new_game
from games.engine.deal import NATIVE_SHUFFLE
from games.engine.game import NATIVE_POSITION_MOVES
from games.engine.players import Budget, play_turn
from games.engine.players.rollout import NATIVE_PLAY_OUT
from games.engine.players.search import NATIVE

budget = Budget(cutoff_ms=600_000)
seats = ("sharp", "normal", "easy", "sharp")
moves = []
for rules in ("classic", "any_space", "casual"):
    for hand in range(int(sys.argv[1])):
        seed = hashlib.sha256(f"builds {rules} {hand}".encode()).digest()
        state, events = new_game(rules=make_rules(rules), players=4, seed=seed, target_score=None)
        while state.status == PLAYING:
            state, played = play_turn(state, seats[state.current_seat], seed, events, budget=budget)
            events.extend(played)
        moves.append(events)
print(json.dumps({
    "build": BUILD,
    "native_search": NATIVE is not None,
    "native_play_out": NATIVE_PLAY_OUT is not None,
    "native_position_moves": NATIVE_POSITION_MOVES is not None,
    "native_shuffle": NATIVE_SHUFFLE is not None,
    "hands": moves,
}))
"""


def _simulate(hands: int, *, pure: bool) -> dict[str, object]:
    environment = {key: value for key, value in os.environ.items() if key != "KINGSCORNER_ENGINE"}
    if pure:
        environment["KINGSCORNER_ENGINE"] = "python"
    completed = subprocess.run(
        [sys.executable, "-c", SIMULATION, str(hands)],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, object] = json.loads(completed.stdout)
    return result


@pytest.mark.slow
def test_the_compiled_and_the_pure_python_engine_play_a_seeded_simulation_move_for_move_alike() -> None:
    compiled = _simulate(3, pure=False)
    if compiled["build"] != "mypyc":
        # CI compiles the engine (.ci/run): there, a missing compiled build is a failure, not a skip.
        if os.environ.get("CI"):
            pytest.fail("the engine is not compiled: no C compiler at install, or a source changed since")
        pytest.skip("the engine is not compiled here (no C compiler at install, or a source changed since)")
    # Where the engine compiles, so do sharp's search and play-outs and the legal moves in C, which the
    # compiled build plays with.
    assert compiled["native_search"] is True and compiled["native_play_out"] is True
    assert compiled["native_position_moves"] is True and compiled["native_shuffle"] is True
    pure = _simulate(3, pure=True)
    assert pure["build"] == "python" and pure["native_search"] is False and pure["native_play_out"] is False
    assert pure["native_position_moves"] is False and pure["native_shuffle"] is False
    assert compiled["hands"] == pure["hands"]


def test_a_c_extension_is_stale_once_its_source_or_the_card_tables_header_changed(tmp_path: Path) -> None:
    """In a source checkout, an edited .c or _cards.h after the build makes the engine run as pure Python (the
    compiled and the edited text would be neither build)."""
    from games.engine.build import _stale

    engine = tmp_path / "games" / "engine"
    (engine / "players").mkdir(parents=True)
    (tmp_path / "setup.py").write_text("")
    files = {
        "mypyc": tmp_path / "engine__mypyc.abi3.so",
        "native": engine / "_native.abi3.so",
        "native_c": engine / "_native.c",
        "search": engine / "players" / "_search_native.abi3.so",
        "search_c": engine / "players" / "_search_native.c",
        "header": engine / "_cards.h",
    }
    for path in files.values():
        path.write_text("")
    built = 1_000_000.0
    for name, path in files.items():
        os.utime(path, (built, built + (0 if name in ("mypyc", "native", "search") else -10)))
    assert _stale([str(engine)]) == []
    os.utime(files["header"], (built, built + 10))
    assert sorted(_stale([str(engine)])) == [str(files["header"])] * 2
    os.utime(files["header"], (built, built - 10))
    os.utime(files["native_c"], (built, built + 10))
    assert _stale([str(engine)]) == [str(files["native_c"])]
