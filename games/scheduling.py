"""The work a service schedules for later, which a Celery task does: the turn clock's task, queued once the
write that starts a person's clocked turn commits. It is sent by the task's name, so that the services that
schedule it and games.tasks, which runs them, do not import each other."""

import logging
import os
import queue
import threading
import time
from datetime import datetime, timedelta
from functools import partial

from django.db import transaction
from django.utils import timezone

from games.models import Game
from kingscorner.celery import app
from kingscorner.scheduler import scheduler

logger = logging.getLogger(__name__)

# The task that plays a timed-out turn (games.tasks.turn_time_out), by its name.
TURN_TIME_OUT = "games.tasks.turn_time_out"
# A turn whose deadline is further off than this gets no task of its own (Redis redelivers a task whose ETA
# lies beyond its visibility timeout, an hour); the beat job plays it within seconds of its deadline.
TURN_CLOCK_TASK_HORIZON = timedelta(hours=1)


def turn_clock_schedule(game: Game) -> None:
    """Once this write commits, queues the task that plays the turn of the person now to move if they have
    not moved by its deadline: with the version this write brings the game to, so that any later write (the
    person's move) makes it a no-op. Without a broker, the in-process scheduler (kingscorner/scheduler.py)
    runs it at the deadline where it runs; where it does not (tasks run in-process at once), no clock runs."""
    deadline = game.turn_deadline
    if deadline is None or deadline - timezone.now() > TURN_CLOCK_TASK_HORIZON:
        return
    if app.conf.task_always_eager and not scheduler.running:
        return
    transaction.on_commit(partial(turn_time_out_queue, str(game.id), game.version, deadline))


class _ClockSender:
    """Sends the clock's tasks to the broker from a thread of this process's own, so that a request never
    waits for the broker, nor fails when it is away: a task that cannot be sent is logged (at most once a
    `warning_interval`) and its turn is played by the beat job once the broker is back."""

    warning_interval = 60.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[str, int, datetime]] = queue.SimpleQueue()
        self._pid: int | None = None
        self._warned_at = 0.0

    def send(self, game_id: str, version: int, deadline: datetime) -> None:
        with self._lock:
            # Started in each process that sends (a forked web worker does not inherit its parent's thread).
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self._queue = queue.SimpleQueue()
                threading.Thread(
                    target=self._run, args=(self._queue,), name="clock-sender", daemon=True
                ).start()
            self._queue.put((game_id, version, deadline))

    def _run(self, pending: "queue.SimpleQueue[tuple[str, int, datetime]]") -> None:
        while True:
            game_id, version, deadline = pending.get()
            try:
                app.send_task(TURN_TIME_OUT, args=[game_id, version], eta=deadline, retry=False)
            except Exception as error:
                if time.monotonic() - self._warned_at >= self.warning_interval:
                    self._warned_at = time.monotonic()
                    logger.warning(
                        "the turn clock's task for game %s could not be queued (%s); the beat job plays the "
                        "turn once the broker answers",
                        game_id,
                        error,
                    )


_clock_sender = _ClockSender()


def turn_time_out_queue(game_id: str, version: int, deadline: datetime) -> None:
    """Queues turn_time_out for `deadline`, without waiting for the broker (or, without one, with the
    in-process scheduler)."""
    if scheduler.running:
        scheduler.call_at(TURN_TIME_OUT, [game_id, version], None, deadline)
        return
    _clock_sender.send(game_id, version, deadline)
