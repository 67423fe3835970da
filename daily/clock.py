"""The daily deal's clock: the UTC time and calendar day, in one place so that tests can move it."""

from datetime import UTC, date, datetime, timedelta

from django.utils import timezone


def now() -> datetime:
    return timezone.now()


def today() -> date:
    return now().astimezone(UTC).date()


def seconds_until_next_day() -> int:
    """Whole seconds, rounded up, until the next UTC midnight, when the next deal starts."""
    current = now().astimezone(UTC)
    midnight = datetime.combine(current.date() + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
    remaining = midnight - current
    return remaining.days * 86400 + remaining.seconds + (1 if remaining.microseconds else 0)
