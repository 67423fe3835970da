"""The Celery tasks of `games`."""

import logging
import os
import queue
import threading
import time
from datetime import datetime

from celery import shared_task

from games import services

logger = logging.getLogger(__name__)


@shared_task
def idempotency_keys_expire() -> int:
    """The beat job: deletes the Idempotency-Keys older than IDEMPOTENCY_KEY_TTL; how many."""
    return services.idempotency_keys_expire()


@shared_task
def turn_time_out(game_id: str, version: int) -> bool:
    """The turn clock, queued with the deadline as its ETA: plays the turn of a person who ran out of time,
    unless the game has moved on from `version`."""
    return services.turn_time_out(game_id=game_id, version=version)


@shared_task
def turn_clocks_catch_up() -> int:
    """The beat job: plays the overdue turns no task played (a worker that was down catches up here)."""
    return services.turn_clocks_catch_up()


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
                turn_time_out.apply_async(args=[game_id, version], eta=deadline, retry=False)
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
    """Queues turn_time_out for `deadline`, without waiting for the broker."""
    _clock_sender.send(game_id, version, deadline)
