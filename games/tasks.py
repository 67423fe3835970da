"""The Celery tasks of `games`."""

from celery import shared_task

from games import services


@shared_task
def idempotency_keys_expire() -> int:
    """The beat job: deletes the Idempotency-Keys older than IDEMPOTENCY_KEY_TTL; how many."""
    return services.idempotency_keys_expire()
