"""examples/verify_daily.py: it confirms a real revealed day and a game played on it against a live server,
and it rejects a forged commitment and a forged event."""

import importlib.util
import json
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from games.engine import (
    DIRECT,
    PLAYING,
    commitment,
    legal_moves,
    make_rules,
    new_game,
    observe,
    shuffle,
    step,
)
from games.engine import observe_event as engine_observe_event
from tests.support.live_api import api, play_to_the_end
from tests.support.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
VERIFIER = ROOT / "examples" / "verify_daily.py"


def _verifier() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_daily", VERIFIER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(VERIFIER), *args], capture_output=True, text=True, timeout=120, check=False
    )


# --- against a live server ----------------------------------------------------------------------------------


def test_the_verifier_uses_nothing_but_the_standard_library() -> None:
    source = VERIFIER.read_text(encoding="utf-8")
    imported = {
        line.split()[1].split(".")[0] for line in source.splitlines() if line.startswith(("import ", "from "))
    }
    assert imported <= set(sys.stdlib_module_names)


def test_the_verifier_confirms_a_revealed_day_and_a_game_played_on_it(live_stack: Stack) -> None:
    # Three days ago is over for the leaderboard however late in the day this runs, so its seed is out.
    day = (datetime.now(UTC).date() - timedelta(days=3)).isoformat()
    token = api(live_stack.base_url, "POST", "players", {"name": "Verifier"})["token"]
    attempt = api(live_stack.base_url, "POST", f"daily/{day}/attempts", {}, token)
    assert attempt["ranked"] is False
    game = play_to_the_end(live_stack.base_url, token, attempt["game"])
    assert game["status"] == "finished"

    result = _run("--base-url", live_stack.base_url, day, "--game", game["id"], "--token", token)

    assert result.returncode == 0, result.stdout + result.stderr
    assert f"VERIFIED: the seed of {day} matches its commitment and every card" in result.stdout
    assert "plays" in result.stdout and "1 end of hand" in result.stdout


def test_the_verifier_checks_a_day_without_a_game(live_stack: Stack) -> None:
    day = (datetime.now(UTC).date() - timedelta(days=4)).isoformat()
    result = _run("--base-url", live_stack.base_url, day)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"VERIFIED: the seed of {day} matches its commitment." in result.stdout


def test_the_verifier_cannot_verify_today_whose_seed_is_still_secret(live_stack: Stack) -> None:
    today = datetime.now(UTC).date().isoformat()
    result = _run("--base-url", live_stack.base_url, today)
    assert result.returncode == 2
    assert "CANNOT VERIFY" in result.stdout and "not revealed yet" in result.stdout


# --- against forged data ------------------------------------------------------------------------------------

FORGED_DAY = date(2026, 3, 5)
SEED = bytes(range(100, 132))


def _played_daily() -> dict[str, Any]:
    """The server's answers for a day and a game played on it through the engine: the day, the game's view
    and its event log as seat 0 sees them."""
    state, events = new_game(
        rules=make_rules("classic"), players=4, seed=SEED, target_score=None, seed_scheme=DIRECT
    )
    log = list(events)
    while state.status == PLAYING:
        # The first legal move is a play whenever one is open, so the hand ends.
        state, events = step(state, legal_moves(state)[0])
        log.extend(events)
    seen = [{"seq": seq, "version": 1, **engine_observe_event(event, 0)} for seq, event in enumerate(log, 1)]
    observation = observe(state, 0)
    return {
        "day": {
            "date": FORGED_DAY.isoformat(),
            "number": 64,
            "rules": make_rules("classic").to_json(),
            "opponents": [{"seat": seat, "name": "x", "level": "normal"} for seat in (1, 2, 3)],
            "commitment": commitment(SEED),
            "seed": SEED.hex(),
            "seed_revealed_at": "2026-03-06T01:00:00Z",
        },
        "game": {
            "id": "g1",
            "status": "finished",
            "hand": observation["hand"],
            "table": {"stock": observation["stock"], "piles": observation["piles"]},
            "seed": SEED.hex(),
        },
        "events": seen,
    }


def _serve(monkeypatch: pytest.MonkeyPatch, verifier: ModuleType, answers: dict[str, Any]) -> None:
    """Answers the verifier's requests from `answers`, the event log in pages of 25."""

    def fetch_json(url: str, token: str | None = None) -> Any:
        parts = urlsplit(url)
        if parts.path == f"/api/v1/daily/{FORGED_DAY.isoformat()}":
            return answers["day"]
        assert token == "kc_token"
        if parts.path == "/api/v1/games/g1":
            return answers["game"]
        assert parts.path == "/api/v1/games/g1/events"
        after = int(parse_qs(parts.query)["after"][0])
        page = [event for event in answers["events"] if event["seq"] > after][:25]
        last = page[-1]["seq"] if page else after
        return {"events": page, "last": last, "has_more": last < answers["events"][-1]["seq"]}

    monkeypatch.setattr(verifier, "fetch_json", fetch_json)


def _verify(verifier: ModuleType, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    arguments = ["--base-url", "http://server", FORGED_DAY.isoformat(), "--game", "g1", "--token", "kc_token"]
    code = verifier.main(arguments)
    return code, capsys.readouterr().out


def test_the_verifier_accepts_a_true_day_and_game_served_in_pages(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    verifier = _verifier()
    answers = _played_daily()
    assert len(answers["events"]) > 25
    _serve(monkeypatch, verifier, answers)
    code, out = _verify(verifier, capsys)
    assert code == 0, out
    assert f"{len(answers['events'])} events replayed" in out


def test_the_verifier_rejects_a_forged_commitment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    verifier = _verifier()
    answers = _played_daily()
    # The easy mistake: the SHA-256 of the seed's hex text instead of its bytes.
    answers["day"]["commitment"] = commitment(SEED.hex().encode())
    _serve(monkeypatch, verifier, answers)
    code, out = _verify(verifier, capsys)
    assert code == 1
    assert "MISMATCH: SHA-256 of the seed is" in out and "NOT VERIFIED" in out


def test_the_verifier_rejects_a_forged_draw(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    verifier = _verifier()
    answers = _played_daily()
    draw = next(event for event in answers["events"] if event["type"] == "draw" and "card" in event)
    other = next(card for card in verifier.DECK if card != draw["card"])
    draw["card"] = other
    _serve(monkeypatch, verifier, answers)
    code, out = _verify(verifier, capsys)
    assert code == 1
    assert f"MISMATCH: game g1, event {draw['seq']} (draw): seat 0 drew {other}" in out


def test_the_verifier_rejects_a_computer_playing_a_card_it_was_never_dealt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    verifier = _verifier()
    answers = _played_daily()
    play = next(event for event in answers["events"] if event["type"] == "play" and event["seat"] != 0)
    table = verifier.deal(SEED, players=4, layout_king="replace")
    foreign = table.hands[0][0]
    play["card"] = foreign
    _serve(monkeypatch, verifier, answers)
    code, out = _verify(verifier, capsys)
    assert code == 1
    assert f"event {play['seq']} (play): seat {play['seat']} played {foreign}" in out


def test_the_verifiers_own_shuffle_deals_as_the_engine_and_the_vectors_do() -> None:
    verifier = _verifier()
    vectors = json.loads((ROOT / "tests" / "vectors" / "deals.json").read_text(encoding="utf-8"))
    for vector in vectors["shuffle"]:
        assert verifier.shuffle(bytes.fromhex(vector["seed"])) == vector["deck"]
    assert verifier.shuffle(SEED) == shuffle(SEED)
