"""examples/client.py as a user runs it: standard library only, it plays the daily and a game against a live
server one request a turn, and every turn it plans is legal under every rule set (the engine checks each
move it sends)."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import DIRECT, END_TURN, PLAYING, PRESETS, make_rules, new_game, observe, parse_move, step
from games.engine.players import computer_turn
from tests.support.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "examples" / "client.py"


def _client() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_client", CLIENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_client_uses_nothing_but_the_standard_library() -> None:
    source = CLIENT.read_text(encoding="utf-8")
    imported = {
        line.split()[1].split(".")[0] for line in source.splitlines() if line.startswith(("import ", "from "))
    }
    assert imported <= set(sys.stdlib_module_names)


@settings(max_examples=60, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), preset=st.sampled_from(sorted(PRESETS)))
def test_every_turn_the_client_plans_is_legal_and_ends_where_the_rules_say(seed: bytes, preset: str) -> None:
    client = _client()
    state, _ = new_game(rules=make_rules(preset), players=4, seed=seed, target_score=None, seed_scheme=DIRECT)
    turns = 0
    while state.status == PLAYING:
        if state.current_seat != 0:
            _, steps = computer_turn(state, "normal", seed)
            for played in steps:
                state = played.state
            continue
        seen = observe(state, 0)
        moves = client.plan_turn(seen["rules"], seen["hand"], seen["piles"])
        turns += 1
        for index, move in enumerate(moves):
            assert state.status == PLAYING, ("a move after the hand ended", moves[index:])
            state, _ = step(state, parse_move(move))  # refuses an illegal move
        # A turn ends with end_turn, unless its last move emptied the hand.
        assert (parse_move(moves[-1]) == END_TURN) != (
            state.status != PLAYING and not observe(state, 0)["hand"]
        )
    assert turns >= 1


def test_the_client_plays_the_daily_one_request_a_turn_and_a_game_to_its_target(live_stack: Stack) -> None:
    run = subprocess.run(
        [sys.executable, str(CLIENT), "--base-url", live_stack.base_url, "--name", "Counted"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    daily = re.search(r"The daily hand took (\d+) requests", out)
    assert daily is not None, out
    entry = re.search(r"Counted#\d{4}\s+[+-]\d+\s+(\d+) turns", out)
    assert entry is not None, out
    # The deal, the attempt, then one request for each of the player's turns.
    assert int(daily.group(1)) == 2 + int(entry.group(1))
    game = re.search(r"Game [0-9a-f-]+: \d+ hands, scores \[.*\], winners \[.+\], in (\d+) requests", out)
    assert game is not None, out
    # Besides: registering, and reading the standing and the leaderboard.
    assert f"{int(daily.group(1)) + int(game.group(1)) + 3} requests in all" in out
