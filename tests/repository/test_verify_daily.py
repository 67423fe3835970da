"""examples/verify_daily.py as a user runs it: standard library only, against a live server, on the saved
anchor and saved commitments, on the vectors of tests/vectors, and on an event log served in pages.
(tests/daily/test_verifier_tampers.py has it catch each tamper done to a real database;
tests/engine/test_verifier_differential.py holds its rules checker and `normal` against the engine.)"""

import json
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from daily.chain import anchor_from
from games.engine import (
    DIRECT,
    END_TURN,
    PLAYING,
    commitment,
    legal_moves,
    make_rules,
    new_game,
    shuffle,
    step,
)
from games.engine import observe_event as engine_observe_event
from games.engine.players import computer_turn
from tests.support.live_api import api, play_to_the_end
from tests.support.stack import Stack
from tests.support.verifier import ROOT, VERIFIER, verifier


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(VERIFIER), *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_the_verifier_uses_nothing_but_the_standard_library() -> None:
    source = VERIFIER.read_text(encoding="utf-8")
    imported = {
        line.split()[1].split(".")[0] for line in source.splitlines() if line.startswith(("import ", "from "))
    }
    assert imported <= set(sys.stdlib_module_names)


# --- against a live server ----------------------------------------------------------------------------------


def test_the_verifier_replays_a_revealed_day_and_a_game_on_it_against_the_anchor_saved(
    live_stack: Stack,
) -> None:
    anchor = api(live_stack.base_url, "GET", "daily/anchor")["anchor"]
    # A day long over, so its seed is out, and one whose deal has computer moves to check: on some days
    # (2026-12-11 among them) the first seat, playing the first legal move each time, goes out on her first
    # turn and the hand ends before any computer plays. The live server runs the quick start's secret, so
    # this day's deal is always the same.
    day = "2026-12-01"
    token = api(live_stack.base_url, "POST", "players", {"name": "Verifier"})["token"]
    attempt = api(live_stack.base_url, "POST", f"daily/{day}/attempts", {}, token)
    assert attempt["ranked"] is False
    game = play_to_the_end(live_stack.base_url, token, attempt["game"])
    assert game["status"] == "finished"

    result = _run(
        "--base-url", live_stack.base_url, day, "--game", game["id"], "--token", token, "--anchor", anchor
    )

    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Trust: the anchor you saved ({anchor})" in result.stdout
    assert "computer moves checked" in result.stdout and "a practice attempt" in result.stdout
    assert (
        f"VERIFIED: the seed of {day} matches its commitment and its chain, and the game replays"
        in result.stdout
    )


def test_the_verifier_checks_a_day_against_the_commitments_saved(live_stack: Stack, tmp_path: Path) -> None:
    day = (datetime.now(UTC).date() - timedelta(days=4)).isoformat()
    saved = tmp_path / "commitments.json"
    saved.write_text(json.dumps(api(live_stack.base_url, "GET", f"daily/commitments?from={day}")))

    result = _run("--base-url", live_stack.base_url, day, "--commitments", str(saved))

    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Trust: the commitments you saved ({saved})" in result.stdout
    assert f"VERIFIED: the seed of {day} matches its commitment and its chain." in result.stdout


def test_the_verifier_cannot_verify_today_whose_seed_is_still_secret(live_stack: Stack) -> None:
    today = datetime.now(UTC).date().isoformat()
    result = _run("--base-url", live_stack.base_url, today)
    assert result.returncode == 2
    assert "Trust: only the server's word" in result.stdout
    assert "CANNOT VERIFY" in result.stdout and "not revealed yet" in result.stdout


# --- its own code on the vectors ----------------------------------------------------------------------------


def test_the_verifier_checks_the_chain_and_shuffle_vectors_with_its_own_code() -> None:
    for name in ("chain.json", "deals.json"):
        result = _run("--check-vectors", str(ROOT / "tests" / "vectors" / name))
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.startswith("VERIFIED: ")
    seed = bytes(range(32))
    assert verifier().shuffle(seed) == shuffle(seed)


def test_the_verifier_refuses_a_vector_file_it_disagrees_with(tmp_path: Path) -> None:
    vectors = json.loads((ROOT / "tests" / "vectors" / "chain.json").read_text(encoding="utf-8"))
    vectors["seasons"][1]["days_shown"][3]["seed"] = vectors["seasons"][1]["days_shown"][2]["seed"]
    forged = tmp_path / "chain.json"
    forged.write_text(json.dumps(vectors))
    result = _run("--check-vectors", str(forged))
    assert result.returncode == 1 and result.stdout.startswith("MISMATCH: ")


# --- an event log in pages ----------------------------------------------------------------------------------

DAY = date(2026, 3, 5)
SEED = bytes(range(100, 132))


def _answers() -> dict[str, Any]:
    """What a server answers for a day whose deal is dealt from SEED (day 63 of a season from 2026-01-01), and
    a practice game played on it through the engine: seat 0 plays its first legal move, the others normal."""
    state, events = new_game(
        rules=make_rules("classic"), players=4, seed=SEED, target_score=None, seed_scheme=DIRECT
    )
    log = list(events)
    while state.status == PLAYING:
        if state.current_seat == 0:
            state, events = step(state, legal_moves(state)[0])
            log.extend(events)
            continue
        _, steps = computer_turn(state, "normal", SEED)
        for played in steps:
            state = played.state
            log.extend(played.events)
    assert legal_moves(state) == [] and END_TURN not in legal_moves(state)
    return {
        "/api/v1/daily/2026-03-05": {
            "date": DAY.isoformat(),
            "number": 64,
            "rules": make_rules("classic").to_json(),
            "opponents": [{"seat": seat, "name": "x", "level": "normal"} for seat in (1, 2, 3)],
            "commitment": commitment(SEED),
            "seed": SEED.hex(),
            "seed_revealed_at": "2026-03-06T01:00:00Z",
            "attempts": [
                {"id": "a1", "game_id": "g1", "ranked": False, "started_at": "2026-03-05T12:00:00Z"}
            ],
        },
        "/api/v1/daily/anchor": {
            "season_start": "2026-01-01",
            "days": 3652,
            "anchor": anchor_from(SEED, 63).hex(),
        },
        "/api/v1/games/g1": {"id": "g1", "status": "finished", "seed": SEED.hex()},
        "events": [
            {"seq": seq, "version": 1, **engine_observe_event(event, 0)} for seq, event in enumerate(log, 1)
        ],
    }


def test_the_verifier_replays_a_log_served_in_pages() -> None:
    module = verifier()
    answers = _answers()
    events = answers["events"]
    assert len(events) > 25

    def fetch(url: str, token: str | None = None) -> Any:
        parts = urlsplit(url)
        if parts.path != "/api/v1/games/g1/events":
            return answers[parts.path]
        after = int(parse_qs(parts.query)["after"][0])
        page = [event for event in events if event["seq"] > after][:25]
        last = page[-1]["seq"] if page else after
        more = last < events[-1]["seq"]
        return {"items": page, "next": f"{url}?after={last}" if more else None, "more_after": last}

    lines: list[str] = []
    code = module.verify(
        "http://server", DAY.isoformat(), game_id="g1", token="t", out=lines.append, fetch=fetch
    )

    assert code == 0, lines
    assert f"{len(events)} events replayed" in "\n".join(lines)


def test_a_game_shown_finished_whose_log_stops_before_the_hand_ends_is_a_mismatch() -> None:
    module = verifier()
    answers = _answers()
    end = next(index for index, event in enumerate(answers["events"]) if event["type"] == "hand_over")
    answers["events"] = answers["events"][: end - 1]

    def fetch(url: str, token: str | None = None) -> Any:
        parts = urlsplit(url)
        if parts.path == "/api/v1/games/g1/events":
            return {"items": answers["events"], "next": None, "more_after": answers["events"][-1]["seq"]}
        return answers[parts.path]

    lines: list[str] = []
    code = module.verify(
        "http://server", DAY.isoformat(), game_id="g1", token="t", out=lines.append, fetch=fetch
    )

    assert code == 1, lines
    assert lines[-1] == "MISMATCH: game g1 is shown finished, but its log stops before the hand ends"
