"""examples/verify_daily.py places a day in its season without the server's word. A server that serves, for
a day, the real seed of an earlier day of the chain (its SHA-256 as the commitment) and moves the season's
start as many days later hashes forward in as many steps to the anchor the player saved: the verifier must
take the season's first day from what the player saved or from the published schedule, and name the
server's other season as a mismatch. Driven through the API on the test database, with a fetch that lies
where the audit's proxy did."""

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient

from daily.chain import season_seeds
from tests.support.daily import Clock
from tests.support.verifier import BASE_URL, client_fetch, verifier

DAY = date(2026, 12, 1)
EARLIER = date(2026, 11, 28)  # the day whose seed the lying server serves for DAY: three days earlier
AFTER_THE_REVEAL = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)

Fetch = Callable[..., Any]


@pytest.fixture
def revealed(daily_clock: Clock, db: None) -> None:
    """DAY is over and its seed revealed (so is EARLIER's)."""
    daily_clock.set(AFTER_THE_REVEAL)


def _saved_anchor_line(day: date = DAY) -> dict[str, Any]:
    """The anchor line a player saved before the season: GET daily/anchor."""
    line: dict[str, Any] = APIClient().get(f"/api/v1/daily/anchor?date={day}").json()
    return line


def _lying_fetch() -> Fetch:
    """The audit's proxy: for DAY, the chain's seed of EARLIER with its SHA-256 as the commitment, and, for
    DAY's anchor, the real anchor with the season's start moved by the days between them; everything else
    as the server answers it."""
    honest = client_fetch(APIClient())
    earlier_seed = honest(f"{BASE_URL}/api/v1/daily/{EARLIER}")["seed"]
    shift = (DAY - EARLIER).days

    def fetch(url: str, token: str | None = None) -> Any:
        answer = honest(url, token)
        parts = urlsplit(url)
        if parts.path == f"/api/v1/daily/{DAY}":
            seed = bytes.fromhex(earlier_seed)
            answer = {**answer, "seed": seed.hex(), "commitment": hashlib.sha256(seed).hexdigest()}
        elif parts.path == "/api/v1/daily/anchor" and parts.query == f"date={DAY}":
            start = date.fromisoformat(answer["season_start"]) + timedelta(days=shift)
            answer = {**answer, "season_start": start.isoformat()}
        return answer

    return fetch


def _verify(
    fetch: Fetch | None = None,
    *,
    day: date = DAY,
    anchor: str | None = None,
    season_start: date | None = None,
    season_days: int | None = None,
) -> tuple[int, str]:
    module = verifier()
    trust = module.Trust(anchor=anchor)
    if season_start is not None:
        trust.season_start, trust.season_days = season_start, season_days
    lines: list[str] = []
    code = module.verify(
        BASE_URL,
        day.isoformat(),
        trust=trust,
        out=lines.append,
        fetch=fetch or client_fetch(APIClient()),
    )
    output = "\n".join(lines)
    print(output)
    return code, output


def test_the_lying_servers_answers_are_the_audits_and_would_hash_forward_to_the_saved_anchor(
    revealed: None,
) -> None:
    # The premise of the attack, checked on the real chain: the served seed is EARLIER's, its commitment
    # matches, and hashed forward from the claimed start it reaches the anchor the player saved.
    saved = _saved_anchor_line()
    assert saved["season_start"] == "2026-01-01" and saved["days"] == 3652
    lying = _lying_fetch()
    deal = lying(f"{BASE_URL}/api/v1/daily/{DAY}")
    served = lying(f"{BASE_URL}/api/v1/daily/anchor?date={DAY}")
    assert served == {**saved, "season_start": "2026-01-04"}
    seed = bytes.fromhex(deal["seed"])
    assert hashlib.sha256(seed).hexdigest() == deal["commitment"]
    assert deal["seed"] != APIClient().get(f"/api/v1/daily/{DAY}").json()["seed"]
    claimed_index = (DAY - date(2026, 1, 4)).days
    assert verifier().anchor_from(seed, claimed_index) == saved["anchor"]


def test_a_seed_of_an_earlier_day_served_with_a_moved_season_start_is_a_mismatch_with_the_anchor_alone(
    revealed: None,
) -> None:
    saved = _saved_anchor_line()

    code, out = _verify(_lying_fetch(), anchor=saved["anchor"])

    assert code == 1, out
    assert "VERIFIED" not in out
    assert (
        "MISMATCH: the server places 2026-12-01 on day 331 of the season of 2026-01-04 (3652 days, to "
        "2036-01-03); the published schedule places it on day 334 of the season of 2026-01-01 (3652 days, to "
        "2035-12-31): a seed's place in its season is not the server's to choose" in out
    )
    assert (
        f"Trust: the anchor you saved ({saved['anchor']})\nTrust: the published schedule for the day's place "
        "in its season (seasons of 3652 days from 2026-01-01), not the server's word\n" in out
    )


def test_the_same_lie_is_a_mismatch_against_the_season_start_saved_with_the_anchor(revealed: None) -> None:
    saved = _saved_anchor_line()

    code, out = _verify(
        _lying_fetch(), anchor=saved["anchor"], season_start=date.fromisoformat(saved["season_start"])
    )

    assert code == 1, out
    assert "MISMATCH: the server places 2026-12-01 on day 331 of the season of 2026-01-04" in out
    assert "the season you saved places it on day 334 of the season of 2026-01-01" in out
    assert "Trust: the anchor you saved" in out and "the season you saved for the day's place in it" in out


def test_the_earlier_days_seed_in_the_right_season_misses_the_saved_anchor(revealed: None) -> None:
    # The same seed, served with the true season: hashed forward from the day's true place, it misses.
    saved = _saved_anchor_line()
    lying = _lying_fetch()

    def seed_only(url: str, token: str | None = None) -> Any:
        if urlsplit(url).path == "/api/v1/daily/anchor":
            return client_fetch(APIClient())(url, token)
        return lying(url, token)

    code, out = _verify(seed_only, anchor=saved["anchor"])

    assert code == 1, out
    assert "MISMATCH: the seed of 2026-12-01, day 334 of the season of 2026-01-01, hashes forward to" in out
    assert f"not to the anchor you saved {saved['anchor']}" in out


def test_the_honest_server_verifies_with_the_anchor_alone(revealed: None) -> None:
    saved = _saved_anchor_line()

    code, out = _verify(anchor=saved["anchor"])

    assert code == 0, out
    assert (
        "chain: day 334 of the season of 2026-01-01 (placed by the published schedule; the server agrees) "
        f"hashes forward to the anchor you saved {saved['anchor']}" in out
    )
    assert out.endswith("VERIFIED: the seed of 2026-12-01 matches its commitment and its chain.")


def test_the_honest_server_verifies_with_the_season_start_saved_with_the_anchor(revealed: None) -> None:
    saved = _saved_anchor_line()

    code, out = _verify(anchor=saved["anchor"], season_start=date(2026, 1, 1), season_days=3652)

    assert code == 0, out
    assert (
        f"Trust: the anchor you saved ({saved['anchor']})\nTrust: the season you saved for the day's place "
        "in it (from 2026-01-01, 3652 days)\n" in out
    )
    assert "(placed by the season you saved; the server agrees)" in out
    assert out.endswith("VERIFIED: the seed of 2026-12-01 matches its commitment and its chain.")


def test_without_an_anchor_the_output_says_the_season_is_the_servers_word(revealed: None) -> None:
    code, out = _verify(_lying_fetch())

    # Nothing saved, nothing to hold the server to: the lie passes, and the output says what it rested on.
    assert code == 0, out
    assert out.startswith("Trust: only the server's word: the anchor, the commitment and the day's place")
    assert "chain: day 331 of the season of 2026-01-04 (as the server places it)" in out


def test_a_day_outside_the_season_saved_cannot_be_vouched_for(revealed: None) -> None:
    saved = _saved_anchor_line()

    code, out = _verify(anchor=saved["anchor"], season_start=date(2026, 1, 1), season_days=300)

    assert code == 2, out
    assert (
        "CANNOT VERIFY: 2026-12-01 is not in the season of 2026-01-01 (300 days, to 2026-10-27), the season "
        "you saved: the anchor you saved cannot vouch for it" in out
    )


def test_a_day_before_the_published_first_season_cannot_be_vouched_for_by_an_anchor(
    revealed: None, settings: Settings
) -> None:
    settings.DAILY_EPOCH = date(2025, 12, 1)
    settings.DAILY_SEASON_START = date(2026, 1, 1)
    saved = _saved_anchor_line()

    code, out = _verify(day=date(2025, 12, 20), anchor=saved["anchor"])

    assert code == 2, out
    assert (
        "CANNOT VERIFY: 2025-12-20 is before the first season of the published schedule (2026-01-01): the "
        "anchor you saved cannot vouch for it" in out
    )


def test_a_server_on_another_schedule_needs_the_season_saved_with_its_anchor(
    revealed: None, settings: Settings
) -> None:
    # A server whose seasons are not the published ones (its own DAILY_SEASON_START and DAILY_SEASON_DAYS):
    # its honest answer differs from the published schedule, so the anchor alone is a mismatch, and the
    # season saved with the anchor verifies.
    settings.DAILY_SEASON_START = date(2026, 11, 1)
    settings.DAILY_SEASON_DAYS = 61
    saved = _saved_anchor_line()
    assert (saved["season_start"], saved["days"]) == ("2026-11-01", 61)
    assert saved["anchor"] == verifier().anchor_from(
        season_seeds(settings.DAILY_SECRET, date(2026, 11, 1), 61)[0], 0
    )

    code, out = _verify(anchor=saved["anchor"])
    assert code == 1, out
    assert (
        "MISMATCH: the server places 2026-12-01 on day 30 of the season of 2026-11-01 (61 days, to "
        "2026-12-31); the published schedule places it on day 334 of the season of 2026-01-01" in out
    )
    assert "give them with --season-start and --season-days" in out

    code, out = _verify(anchor=saved["anchor"], season_start=date(2026, 11, 1), season_days=61)
    assert code == 0, out
    assert "chain: day 30 of the season of 2026-11-01 (placed by the season you saved" in out


def test_with_saved_commitments_alone_the_output_says_the_season_is_the_servers_word(
    revealed: None, tmp_path: Path
) -> None:
    saved = tmp_path / "commitments.json"
    saved.write_text(json.dumps(APIClient().get(f"/api/v1/daily/commitments?from={DAY}&to={DAY}").json()))
    module = verifier()
    trust = module.Trust(commitments=module.load_commitments(str(saved)), commitments_path=str(saved))
    lines: list[str] = []

    code = module.verify(
        BASE_URL, DAY.isoformat(), trust=trust, out=lines.append, fetch=client_fetch(APIClient())
    )

    assert code == 0, lines
    assert lines[:2] == [
        f"Trust: the commitments you saved ({saved})",
        "Trust: only the server's word for the day's place in its season (give the anchor line you saved: "
        "--anchor, and --season-start)",
    ]
