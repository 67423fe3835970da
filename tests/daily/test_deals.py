"""The deal of each day: its seed and commitment, number, rules and opponents, created once however often
and by whichever path it is asked for."""

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.test import Client, override_settings

from daily import services
from daily.errors import NoDailyDeal
from daily.models import DailyDeal
from daily.tasks import daily_deals_create
from games.engine import make_rules, shuffle
from tests.support.daily import TODAY, Clock
from tests.support.races import race, split

VECTORS_PATH = Path(__file__).resolve().parents[1] / "vectors" / "deals.json"
VECTORS = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))


@pytest.mark.django_db
@pytest.mark.parametrize("vector", VECTORS["daily_seed"], ids=lambda vector: vector["date"])
def test_a_day_before_the_first_season_keeps_the_hmac_seed_of_its_date(vector: dict[str, Any]) -> None:
    with override_settings(DAILY_SECRET=vector["secret"], DAILY_SEASON_START=date(2028, 1, 1)):
        deal = services.daily_deal_get_or_create(day=date.fromisoformat(vector["date"]))
    assert deal.seed == vector["seed"]
    assert deal.commitment == vector["commitment"]
    assert shuffle(bytes.fromhex(deal.seed)) == vector["deck"]


@pytest.mark.django_db
def test_deal_numbers_count_from_the_epoch_with_classic_rules_against_three_opponents() -> None:
    first = services.daily_deal_get_or_create(day=date(2026, 1, 1))
    deal = services.daily_deal_get_or_create(day=date(2026, 12, 1))
    assert (first.number, deal.number) == (1, 335)
    assert deal.rules == make_rules("classic").to_json()
    assert deal.opponents == [
        {"name": "Millie", "level": "normal"},
        {"name": "Roy", "level": "normal"},
        {"name": "Bess", "level": "normal"},
    ]


@pytest.mark.django_db
@override_settings(DAILY_OPPONENT_LEVEL="sharp", DAILY_EPOCH=date(2026, 3, 1))
def test_opponent_level_and_epoch_are_settings() -> None:
    deal = services.daily_deal_get_or_create(day=date(2026, 3, 5))
    assert deal.number == 5
    assert {opponent["level"] for opponent in deal.opponents} == {"sharp"}


@pytest.mark.django_db
def test_there_is_no_deal_before_the_epoch() -> None:
    with pytest.raises(NoDailyDeal):
        services.daily_deal_get_or_create(day=date(2025, 12, 31))
    assert not DailyDeal.objects.exists()


@pytest.mark.django_db
def test_the_task_run_twice_makes_one_deal_for_today_and_one_for_tomorrow(daily_clock: Clock) -> None:
    assert daily_deals_create.delay().get() == [TODAY.isoformat(), (TODAY + timedelta(days=1)).isoformat()]
    first = {deal.date: (deal.id, deal.seed) for deal in DailyDeal.objects.all()}
    daily_deals_create.delay()
    assert {deal.date: (deal.id, deal.seed) for deal in DailyDeal.objects.all()} == first
    assert set(first) == {TODAY, TODAY + timedelta(days=1)}


@pytest.mark.django_db
def test_the_first_request_and_the_job_create_the_same_deal(daily_clock: Clock, client: Client) -> None:
    body = client.get("/api/v1/daily").json()
    from_request = DailyDeal.objects.get(date=TODAY)
    from_request_fields = (from_request.number, from_request.seed, from_request.rules, from_request.opponents)
    DailyDeal.objects.all().delete()
    daily_deals_create.delay()
    from_job = DailyDeal.objects.get(date=TODAY)
    assert (from_job.number, from_job.seed, from_job.rules, from_job.opponents) == from_request_fields
    assert body["commitment"] == from_job.commitment


@pytest.mark.django_db
def test_generate_daily_creates_today_and_tomorrow_and_named_days(
    daily_clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    call_command("generate_daily")
    call_command("generate_daily")
    call_command("generate_daily", "2026-02-01")
    assert sorted(DailyDeal.objects.values_list("date", flat=True)) == [
        date(2026, 2, 1),
        TODAY,
        TODAY + timedelta(days=1),
    ]
    assert "Daily #32 2026-02-01" in capsys.readouterr().out


@pytest.mark.django_db
def test_generate_daily_refuses_a_day_before_the_epoch_with_a_command_error() -> None:
    with pytest.raises(CommandError, match="2026-01-01"):
        call_command("generate_daily", "2025-12-31")
    assert not DailyDeal.objects.exists()


@pytest.mark.django_db
def test_the_database_holds_one_deal_per_date() -> None:
    deal = services.daily_deal_get_or_create(day=TODAY)
    with pytest.raises(IntegrityError), transaction.atomic():
        DailyDeal.objects.create(
            date=TODAY, number=deal.number, rules={}, opponents=[], seed="", commitment=deal.commitment
        )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_creators_of_a_deal_end_up_with_one_row() -> None:
    deal_ids, errors = split(race(8, lambda: services.daily_deal_get_or_create(day=TODAY).id))
    assert errors == []
    assert len(set(deal_ids)) == 1
    assert DailyDeal.objects.count() == 1
