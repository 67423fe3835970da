"""The seasons of the daily seeds under the server's settings: which season a day is in, its seed, a season's
anchor. A day before DAILY_SEASON_START (and from DAILY_EPOCH) keeps the seed deals had before the chain,
HMAC-SHA256(DAILY_SECRET, "kingscorner-daily:" + date), and is in no season."""

from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from django.conf import settings

from daily.chain import anchor_of, season_seeds
from games.engine import daily_seed


@dataclass(frozen=True, slots=True)
class Season:
    start: date
    days: int

    @property
    def last_day(self) -> date:
        return self.start + timedelta(days=self.days - 1)

    def index(self, day: date) -> int:
        """The day's place in the season, 0 for its first day."""
        return (day - self.start).days


def first_season() -> Season:
    return Season(settings.DAILY_SEASON_START, settings.DAILY_SEASON_DAYS)


def season_of(day: date) -> Season | None:
    """The season `day` is in; None before the first season. Seasons follow each other without a gap."""
    first = first_season()
    if day < first.start:
        return None
    number = (day - first.start).days // first.days
    return Season(first.start + timedelta(days=number * first.days), first.days)


@lru_cache(maxsize=8)
def _seeds(secret: str, season: Season) -> tuple[bytes, ...]:
    # A season is a few thousand hashes: computed once per process, then each day's seed is a lookup.
    return season_seeds(secret, season.start, season.days)


def season_anchor(season: Season) -> bytes:
    return anchor_of(_seeds(settings.DAILY_SECRET, season)[0])


def day_seed(day: date) -> bytes:
    """The seed of `day`'s deal: its place on its season's chain, or for a day before the first season the
    HMAC of its date."""
    season = season_of(day)
    if season is None:
        return daily_seed(settings.DAILY_SECRET, day)
    return _seeds(settings.DAILY_SECRET, season)[season.index(day)]
