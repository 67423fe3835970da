"""The Celery tasks of `daily`."""

from celery import shared_task

from daily import services


@shared_task
def daily_deals_create() -> list[str]:
    """The beat job: makes sure today's and tomorrow's deals exist. Running it again changes nothing."""
    return [deal.date.isoformat() for deal in services.daily_deals_create_upcoming()]


@shared_task
def daily_attempts_close() -> dict[str, int]:
    """The beat job: closes the ranked attempts left unfinished at their day's finishing deadline, on every
    day past it that is not closed yet; by day, how many it closed. Running it again changes nothing."""
    return {day.isoformat(): closed for day, closed in services.daily_deals_close_due().items()}


# A search of a few seconds of CPU a day: the quick start's in-process scheduler runs it in a process of its
# own (kingscorner/scheduler.py).
@shared_task(cpu_bound=True)
def daily_pars_compute() -> dict[str, int | None]:
    """The beat job: computes the par of every day whose seed is revealed and that has none yet, newest first;
    by day, the par (None for a day another worker is computing). Running it again, or on two workers at
    once, stores one par per day."""
    return {day.isoformat(): par for day, par in services.daily_pars_compute_due().items()}


@shared_task
def daily_events_announce() -> list[str]:
    """The beat job: tells every person stream of today's deal and of the last day's seed revealed, once
    each; the broadcasts it made."""
    return services.daily_events_announce()
