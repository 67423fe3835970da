"""The Celery tasks of `daily`."""

from celery import shared_task

from daily import services


@shared_task
def daily_deals_create() -> list[str]:
    """The beat job: makes sure today's and tomorrow's deals exist. Running it again changes nothing."""
    return [deal.date.isoformat() for deal in services.daily_deals_create_upcoming()]
