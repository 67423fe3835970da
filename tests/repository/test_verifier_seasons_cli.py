"""examples/verify_daily.py run as a user runs it, against a server that lies about a seed's place in its
season: the audit's reproduction, word for word. For 2026-12-01 the server serves the chain's seed of
2026-11-28 (with its SHA-256 as the commitment) and answers `season_start: "2026-01-04"` for
`daily/anchor?date=2026-12-01`; hashed forward from there, the seed reaches the real anchor in as many steps.
The verifier places the day by the published schedule (or the season saved with the anchor), so it is a
mismatch; the honest server still verifies with `--anchor` alone and with `--season-start`."""

import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from daily.chain import anchor_of, season_seeds
from games.engine import make_rules
from tests.support.verifier import VERIFIER

SECRET = "verifier-seasons-secret"
SEASON_START = date(2026, 1, 1)
SEASON_DAYS = 3652
DAY = date(2026, 12, 1)
EARLIER = date(2026, 11, 28)
SEEDS = season_seeds(SECRET, SEASON_START, SEASON_DAYS)
ANCHOR = anchor_of(SEEDS[0]).hex()


def _deal(day: date, seed: bytes) -> dict[str, Any]:
    return {
        "date": day.isoformat(),
        "number": (day - SEASON_START).days + 1,
        "rules": make_rules("classic").to_json(),
        "opponents": [{"seat": seat, "name": f"Computer {seat}", "level": "normal"} for seat in (1, 2, 3)],
        "commitment": hashlib.sha256(seed).hexdigest(),
        "seed": seed.hex(),
        "seed_revealed_at": (day + timedelta(days=1)).isoformat() + "T01:00:00Z",
    }


def _honest() -> dict[str, Any]:
    """What an honest server answers for DAY: its seed on the chain, its season."""
    return {
        f"/api/v1/daily/{DAY}": _deal(DAY, SEEDS[(DAY - SEASON_START).days]),
        f"/api/v1/daily/anchor?date={DAY}": {
            "season_start": SEASON_START.isoformat(),
            "days": SEASON_DAYS,
            "anchor": ANCHOR,
        },
    }


def _lying() -> dict[str, Any]:
    """The audit's proxy: the seed of EARLIER for DAY, and the season's start moved as many days later."""
    shift = (DAY - EARLIER).days
    return {
        f"/api/v1/daily/{DAY}": _deal(DAY, SEEDS[(EARLIER - SEASON_START).days]),
        f"/api/v1/daily/anchor?date={DAY}": {
            "season_start": (SEASON_START + timedelta(days=shift)).isoformat(),
            "days": SEASON_DAYS,
            "anchor": ANCHOR,
        },
    }


class _Server:
    def __init__(self) -> None:
        self.answers: dict[str, Any] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                answer = server.answers.get(self.path)
                body = json.dumps(answer if answer is not None else {"code": "not_found"}).encode()
                self.send_response(200 if answer is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture
def server() -> Iterator[_Server]:
    fake = _Server()
    thread = threading.Thread(target=fake.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.httpd.shutdown()
        fake.httpd.server_close()
        thread.join(timeout=10)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, str(VERIFIER), *args], capture_output=True, text=True, timeout=120, check=False
    )
    print(result.stdout, result.stderr)
    return result


def test_the_lie_is_the_audits_premise() -> None:
    # Hashed forward from the moved start, the earlier day's seed reaches the real anchor: the old verifier,
    # which took the start from the server, said VERIFIED.
    lying = _lying()
    seed = bytes.fromhex(lying[f"/api/v1/daily/{DAY}"]["seed"])
    moved = date.fromisoformat(lying[f"/api/v1/daily/anchor?date={DAY}"]["season_start"])
    index = (DAY - moved).days
    for _ in range(index):
        seed = hashlib.sha256(b"kingscorner-chain:" + seed).digest()
    assert hashlib.sha256(seed).hexdigest() == ANCHOR


def test_the_audits_reproduction_is_a_mismatch(server: _Server) -> None:
    server.answers = _lying()

    result = _run("--base-url", server.base_url, "--anchor", ANCHOR, DAY.isoformat())

    assert result.returncode == 1, result.stdout + result.stderr
    assert "VERIFIED" not in result.stdout
    assert (
        "MISMATCH: the server places 2026-12-01 on day 331 of the season of 2026-01-04 (3652 days, to "
        "2036-01-03); the published schedule places it on day 334 of the season of 2026-01-01 (3652 days, to "
        "2035-12-31)" in result.stdout
    )
    assert "Trust: the published schedule for the day's place in its season" in result.stdout.splitlines()[1]


def test_the_audits_reproduction_is_a_mismatch_with_the_season_start_saved(server: _Server) -> None:
    server.answers = _lying()

    result = _run(
        "--base-url", server.base_url, "--anchor", ANCHOR, "--season-start", "2026-01-01", DAY.isoformat()
    )

    assert result.returncode == 1, result.stdout + result.stderr
    assert "the season you saved places it on day 334 of the season of 2026-01-01" in result.stdout


def test_the_honest_server_verifies_with_the_anchor_alone(server: _Server) -> None:
    server.answers = _honest()

    result = _run("--base-url", server.base_url, "--anchor", ANCHOR, DAY.isoformat())

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[:2] == [
        f"Trust: the anchor you saved ({ANCHOR})",
        "Trust: the published schedule for the day's place in its season (seasons of 3652 days from "
        "2026-01-01), not the server's word",
    ]
    assert "VERIFIED: the seed of 2026-12-01 matches its commitment and its chain." in result.stdout


@pytest.mark.parametrize("days", [[], ["--season-days", "3652"]])
def test_the_honest_server_verifies_with_the_season_start_saved(server: _Server, days: list[str]) -> None:
    server.answers = _honest()

    result = _run(
        "--base-url", server.base_url, "--anchor", ANCHOR, "--season-start", "2026-01-01", *days, "2026-12-01"
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[:2] == [
        f"Trust: the anchor you saved ({ANCHOR})",
        "Trust: the season you saved for the day's place in it (from 2026-01-01, 3652 days)",
    ]
    assert "VERIFIED: the seed of 2026-12-01 matches its commitment and its chain." in result.stdout


def test_a_season_start_other_than_the_servers_is_a_mismatch_never_verified(server: _Server) -> None:
    server.answers = _honest()

    result = _run(
        "--base-url", server.base_url, "--anchor", ANCHOR, "--season-start", "2026-01-02", DAY.isoformat()
    )

    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "MISMATCH: the server places 2026-12-01 on day 334 of the season of 2026-01-01 (3652 days, to "
        "2035-12-31); the season you saved places it on day 333 of the season of 2026-01-02" in result.stdout
    )


def test_season_days_without_a_season_start_and_a_malformed_start_are_refused(server: _Server) -> None:
    result = _run("--base-url", server.base_url, "--season-days", "30", DAY.isoformat())
    assert result.returncode == 2 and "--season-days goes with --season-start" in result.stderr
    result = _run("--base-url", server.base_url, "--season-start", "1 Jan 2026", DAY.isoformat())
    assert result.returncode == 2 and "a day is written YYYY-MM-DD" in result.stderr


def test_a_season_start_without_an_anchor_still_holds_the_server_to_that_season(server: _Server) -> None:
    server.answers = _honest()
    result = _run("--base-url", server.base_url, "--season-start", "2026-01-01", DAY.isoformat())
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[:2] == [
        "Trust: only the server's word for the anchor and the commitment (give the anchor you saved, "
        "--anchor)",
        "Trust: the season you saved for the day's place in it (from 2026-01-01, 3652 days)",
    ]
    assert "(placed by the season you saved; the server agrees) hashes forward to the server's anchor" in (
        result.stdout
    )

    server.answers = _lying()
    result = _run("--base-url", server.base_url, "--season-start", "2026-01-01", DAY.isoformat())
    assert result.returncode == 1, result.stdout + result.stderr
    assert "MISMATCH: the server places 2026-12-01 on day 331 of the season of 2026-01-04" in result.stdout
