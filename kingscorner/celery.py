"""The Celery app; its configuration is the CELERY_* names of the Django settings."""

import os
from datetime import UTC, datetime, timedelta
from typing import Any

from celery import Celery
from celery import Task as CeleryTask
from celery.utils import uuid

from kingscorner.scheduler import scheduler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kingscorner.settings")


class Task(CeleryTask):  # type: ignore[misc]
    """The base of the project's tasks. Where the in-process scheduler runs (kingscorner/scheduler.py: the
    quick start, without a broker), a task queued for a moment (`eta` or `countdown`) runs at that moment
    rather than at once, and a `cpu_bound` task runs in the scheduler's worker process rather than on the
    caller's thread; elsewhere, as Celery does: sent to the broker, or run at once in-process."""

    # Set on a task whose work is seconds of CPU (the par search): see kingscorner/scheduler.py.
    cpu_bound = False

    def apply_async(
        self, args: Any = None, kwargs: Any = None, task_id: str | None = None, *rest: Any, **options: Any
    ) -> Any:
        if scheduler.running:
            at = _moment(options)
            if at is not None:
                scheduler.call_at(self.name, args, kwargs, at)
                return self.AsyncResult(task_id or uuid())
            if self.cpu_bound:
                scheduler.run_now(self.name, args, kwargs)
                return self.AsyncResult(task_id or uuid())
        return super().apply_async(args, kwargs, task_id, *rest, **options)


def _moment(options: dict[str, Any]) -> datetime | None:
    eta, countdown = options.get("eta"), options.get("countdown")
    if eta is not None:
        moment: datetime = eta if isinstance(eta, datetime) else datetime.fromisoformat(eta)
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    if countdown is not None:
        return datetime.now(UTC) + timedelta(seconds=float(countdown))
    return None


app = Celery("kingscorner", task_cls=Task)
scheduler.bind(app)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
