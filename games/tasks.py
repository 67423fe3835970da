"""The Celery tasks of `games`."""

from celery import shared_task

from games import scheduling, services
from games.services import person_feed


@shared_task
def idempotency_keys_expire() -> int:
    """The beat job: deletes the Idempotency-Keys older than IDEMPOTENCY_KEY_TTL; how many."""
    return services.idempotency_keys_expire()


@shared_task(name=scheduling.TURN_TIME_OUT)
def turn_time_out(game_id: str, version: int) -> bool:
    """The turn clock, queued with the deadline as its ETA: plays the turn of a person who ran out of time,
    unless the game has moved on from `version`."""
    return services.turn_time_out(game_id=game_id, version=version)


@shared_task
def turn_clocks_catch_up() -> int:
    """The beat job: plays the overdue turns no task played (a worker that was down catches up here)."""
    return services.turn_clocks_catch_up()


@shared_task
def person_events_prune() -> int:
    """The beat job: deletes the person events older than PERSON_EVENTS_RETENTION_SECONDS; how many."""
    return person_feed.person_events_prune()
