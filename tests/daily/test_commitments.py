"""GET daily/anchor and GET daily/commitments: the season's anchor and the days' commitments up to 30 days
ahead, read from the chain without writing; their refusals; and `manage.py daily_anchor`."""

import hashlib
import io
from datetime import date, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings
from pytest_django import Settings
from rest_framework.test import APIClient

from daily import services
from daily.chain import anchor_from, season_seeds
from daily.models import DailyDeal
from games.engine import daily_seed
from tests.support.daily import TODAY, Clock
from tests.support.problems import assert_problem

SECRET = "commitments-secret"
FIRST = date(2026, 1, 1)


@pytest.fixture(autouse=True)
def _season(settings: Settings, daily_clock: Clock) -> None:
    settings.DAILY_SECRET = SECRET
    settings.DAILY_SEASON_START = FIRST
    settings.DAILY_SEASON_DAYS = 3652


def _commitment(day: date) -> str:
    return hashlib.sha256(season_seeds(SECRET, FIRST, 3652)[(day - FIRST).days]).hexdigest()


@pytest.mark.django_db
def test_the_anchor_is_that_of_todays_season_and_any_days_season_without_a_token() -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer not-a-token")  # ignored, as on the rules
    body = client.get("/api/v1/daily/anchor").json()
    seeds = season_seeds(SECRET, FIRST, 3652)
    assert body == {
        "season_start": "2026-01-01",
        "days": 3652,
        "anchor": hashlib.sha256(seeds[0]).hexdigest(),
    }
    assert anchor_from(seeds[63], 63).hex() == body["anchor"]
    following = client.get("/api/v1/daily/anchor?date=2036-01-01").json()
    assert following["season_start"] == "2036-01-01"  # 3652 days after 2026-01-01: ten years to the day
    assert following["anchor"] != body["anchor"]


@pytest.mark.django_db
def test_the_commitments_run_from_today_to_30_days_ahead_by_default_and_write_nothing() -> None:
    body = APIClient().get("/api/v1/daily/commitments").json()
    days = [TODAY + timedelta(days=offset) for offset in range(31)]
    assert body == {
        "commitments": [
            {"date": day.isoformat(), "commitment": _commitment(day), "season_start": "2026-01-01"}
            for day in days
        ]
    }
    assert not DailyDeal.objects.exists()


@pytest.mark.django_db
def test_a_deal_created_later_has_the_commitment_published_ahead() -> None:
    ahead = APIClient().get("/api/v1/daily/commitments?from=2026-04-04&to=2026-04-04").json()["commitments"]
    deal = services.daily_deal_get_or_create(day=date(2026, 4, 4))
    assert ahead == [{"date": "2026-04-04", "commitment": deal.commitment, "season_start": "2026-01-01"}]


@pytest.mark.django_db
def test_past_days_list_the_stored_deals_commitments_and_skip_the_days_before_the_first_deal() -> None:
    stored = services.daily_deal_get_or_create(day=date(2026, 1, 2))
    body = APIClient().get("/api/v1/daily/commitments?from=2025-12-30&to=2026-01-02").json()
    assert [entry["date"] for entry in body["commitments"]] == ["2026-01-01", "2026-01-02"]
    assert body["commitments"][1]["commitment"] == stored.commitment


@pytest.mark.django_db
def test_a_day_before_the_first_season_has_no_season_and_the_hmac_commitment(settings: Settings) -> None:
    settings.DAILY_SEASON_START = date(2026, 3, 1)
    body = APIClient().get("/api/v1/daily/commitments?from=2026-02-28&to=2026-03-01").json()
    before, first = body["commitments"]
    assert before == {
        "date": "2026-02-28",
        "commitment": hashlib.sha256(daily_seed(SECRET, date(2026, 2, 28))).hexdigest(),
        "season_start": None,
    }
    assert first["season_start"] == "2026-03-01"
    assert_problem(APIClient().get("/api/v1/daily/anchor?date=2026-02-28"), 404, "no_season")


@pytest.mark.django_db
def test_the_anchor_shows_the_first_season_before_it_starts(settings: Settings) -> None:
    settings.DAILY_SEASON_START = date(2026, 4, 1)
    body = APIClient().get("/api/v1/daily/anchor").json()
    assert body["season_start"] == "2026-04-01"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("from=2026-02-30", "invalid_date"),
        ("to=tomorrow", "invalid_date"),
        ("from=2026-03-10&to=2026-03-09", "invalid_date_range"),
        ("from=2025-03-01&to=2026-03-05", "invalid_date_range"),
        ("to=2026-04-05", "date_too_far_ahead"),
        ("from=2026-04-05", "date_too_far_ahead"),
    ],
)
def test_bad_ranges_are_refused(query: str, code: str) -> None:
    assert_problem(APIClient().get(f"/api/v1/daily/commitments?{query}"), 400, code)


@pytest.mark.django_db
def test_the_longest_range_and_the_last_day_ahead_are_served() -> None:
    body = APIClient().get("/api/v1/daily/commitments?from=2025-04-04&to=2026-04-04").json()
    assert len(body["commitments"]) == (date(2026, 4, 4) - FIRST).days + 1
    assert body["commitments"][-1]["date"] == "2026-04-04"


@pytest.mark.django_db
def test_the_command_prints_this_season_and_the_next_and_catches_a_stored_deal_off_the_chain() -> None:
    out = io.StringIO()
    call_command("daily_anchor", stdout=out)
    lines = out.getvalue().splitlines()
    anchor = APIClient().get("/api/v1/daily/anchor").json()["anchor"]
    assert lines[0] == f"season_start 2026-01-01 days 3652 last_day 2035-12-31 anchor {anchor}"
    assert lines[1].startswith("season_start 2036-01-01 days 3652 last_day 2045-12-30 anchor ")
    services.daily_deal_get_or_create(day=TODAY)
    with override_settings(DAILY_SECRET="another secret"):
        with pytest.raises(CommandError, match="1 stored deal"):
            call_command("daily_anchor", stdout=io.StringIO())


def test_a_season_without_a_day_is_a_configuration_error(settings: Settings) -> None:
    settings.DAILY_SEASON_DAYS = 0
    with pytest.raises(SystemCheckError, match="daily.E001"):
        call_command("check")
