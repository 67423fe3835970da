"""What commits the server to its daily seeds in advance: a season's anchor, and the days' commitments
from the past up to 30 days ahead. Both are fixed by the seed chain, so they are read, never written."""

import hashlib
from datetime import date, timedelta
from typing import TypedDict

from django.conf import settings

from daily import clock
from daily.errors import DateTooFarAhead, InvalidDateRange, NoSeason
from daily.models import DailyDeal
from daily.seasons import day_seed, first_season, season_anchor, season_of

COMMITMENTS_AHEAD_DAYS = 30
COMMITMENTS_RANGE_DAYS = 366


class SeasonAnchor(TypedDict):
    season_start: date
    days: int
    anchor: str


class DayCommitment(TypedDict):
    date: date
    commitment: str
    season_start: date | None


class Commitments(TypedDict):
    commitments: list[DayCommitment]


def anchor_view(*, day: date | None) -> SeasonAnchor:
    """The anchor of the season `day` is in; without a day, today's season, or the first one while it has
    not started."""
    season = season_of(clock.today() if day is None else day)
    if season is None:
        if day is not None:
            raise NoSeason()
        season = first_season()
    return {"season_start": season.start, "days": season.days, "anchor": season_anchor(season).hex()}


def commitments_range(*, start: date | None, end: date | None) -> tuple[date, date]:
    """The days asked for: `start` defaults to today, `end` to 30 days after `start` but no further than
    the last day published ahead, today + 30."""
    horizon = clock.today() + timedelta(days=COMMITMENTS_AHEAD_DAYS)
    start = clock.today() if start is None else start
    if max(start, end or start) > horizon:
        raise DateTooFarAhead(
            f"Commitments are published up to {horizon.isoformat()}, {COMMITMENTS_AHEAD_DAYS} days ahead."
        )
    end = min(start + timedelta(days=COMMITMENTS_AHEAD_DAYS), horizon) if end is None else end
    if start > end:
        raise InvalidDateRange("`from` is after `to`.")
    if (end - start).days + 1 > COMMITMENTS_RANGE_DAYS:
        raise InvalidDateRange(f"A request lists at most {COMMITMENTS_RANGE_DAYS} days.")
    return start, end


def commitments_list(*, start: date, end: date) -> Commitments:
    """Each day's commitment from `start` to `end`, those before the first deal left out: a stored deal's
    own, else the one its seed will have (a deal is a pure function of its date)."""
    first = max(start, settings.DAILY_EPOCH)
    stored = dict(DailyDeal.objects.filter(date__range=(first, end)).values_list("date", "commitment"))
    commitments: list[DayCommitment] = []
    day = first
    while day <= end:
        season = season_of(day)
        commitment = stored.get(day) or hashlib.sha256(day_seed(day)).hexdigest()
        commitments.append(
            {"date": day, "commitment": commitment, "season_start": None if season is None else season.start}
        )
        day += timedelta(days=1)
    return {"commitments": commitments}
