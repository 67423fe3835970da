"""The daily deal's clock: the UTC time and calendar day, in one place so that tests can move it."""

from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.utils import timezone


def now() -> datetime:
    return timezone.now()


def today() -> date:
    return now().astimezone(UTC).date()


def started(day: date) -> bool:
    """Whether the day has started (today or earlier): its deal may be shown."""
    return day <= today()


def seconds_until_next_day() -> int:
    """Whole seconds, rounded up, until the next UTC midnight, when the next deal starts."""
    current = now().astimezone(UTC)
    midnight = datetime.combine(current.date() + timedelta(days=1), time.min, tzinfo=UTC)
    remaining = midnight - current
    return remaining.days * 86400 + remaining.seconds + (1 if remaining.microseconds else 0)


def finish_deadline(day: date) -> datetime:
    """When the day is over for the leaderboard: the next UTC midnight plus DAILY_FINISH_GRACE_SECONDS.
    Ranked attempts of the day may be finished until then, and its seed is revealed from then on."""
    midnight = datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC)
    return midnight + timedelta(seconds=settings.DAILY_FINISH_GRACE_SECONDS)


def is_over(day: date) -> bool:
    return now() >= finish_deadline(day)


def last_day_over() -> date:
    """The latest day whose finishing deadline has passed."""
    grace = timedelta(seconds=settings.DAILY_FINISH_GRACE_SECONDS)
    return (now().astimezone(UTC) - grace).date() - timedelta(days=1)
