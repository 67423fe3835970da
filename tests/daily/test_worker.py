"""The daily deal's job run by a real Celery worker, taking it from the machine's Redis and writing to
PostgreSQL."""

import os
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun

from daily.models import DailyDeal
from daily.tasks import daily_deals_create
from kingscorner.celery import app
from tests.support.daily import TODAY, Clock


@pytest.fixture
def tasks_go_to_the_broker() -> Iterator[None]:
    """Undoes, for one test, the suite's in-process running of tasks."""
    if not app.conf.broker_url.startswith("redis://"):
        if os.environ.get("CI"):
            pytest.fail("CI runs this test against Redis: set CELERY_BROKER_URL=redis://...")
        pytest.skip("needs Redis: set CELERY_BROKER_URL=redis://...")
    app.conf.update(task_always_eager=False)
    try:
        yield
    finally:
        app.conf.update(task_always_eager=True)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_worker_on_redis_runs_the_job_twice_and_postgresql_holds_one_deal_per_day(
    tasks_go_to_the_broker: None, daily_clock: Clock
) -> None:
    # A queue of its own, so that no other worker on the same Redis takes these messages.
    queue = f"test-daily-{uuid.uuid4().hex}"
    # The worker runs in this process, so the fixed clock holds for it: no run near midnight sees two days.
    today = TODAY
    finished: list[tuple[str, str]] = []

    def on_postrun(task_id: str, state: str, **kwargs: object) -> None:
        finished.append((task_id, state))

    task_postrun.connect(on_postrun, sender=daily_deals_create, weak=False)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, queues=[queue], shutdown_timeout=30):
            sent = {daily_deals_create.apply_async(queue=queue).id for _ in range(2)}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and len(finished) < 2:
                time.sleep(0.05)
    finally:
        task_postrun.disconnect(on_postrun, sender=daily_deals_create)
        with app.connection_for_write() as connection:
            connection.default_channel.queue_delete(queue)
    assert sorted(finished) == sorted((task_id, "SUCCESS") for task_id in sent)
    assert sorted(DailyDeal.objects.values_list("date", flat=True)) == [today, today + timedelta(days=1)]
