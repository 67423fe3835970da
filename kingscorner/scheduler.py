"""The in-process scheduler of the quick start: without a broker, the served process runs beat's schedule
itself, and the tasks queued for a moment (a turn's deadline) at that moment, which with a broker Celery beat
and workers do.

It is started by the ASGI application's lifespan (kingscorner/asgi.py) when IN_PROCESS_SCHEDULER is on and
tasks run in-process (no broker), and never by tests unless one turns the setting on. Every served process
holds the tasks queued in it for a moment; one process of those sharing a database (a lock file) runs the
beat schedule. A task runs on a thread of the served process, so that a write it makes wakes that process's
event streams, except one marked `cpu_bound` (the par search), which runs in a worker process of its own: the
served process's threads share one interpreter lock, and a search holding it for seconds would hold every
request back for as long."""

import fcntl
import hashlib
import heapq
import itertools
import logging
import multiprocessing
import os
import signal
import tempfile
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO, Any, cast

logger = logging.getLogger(__name__)

# The timer sleeps at most this long, so that a change of the system clock is noticed within it.
MAX_SLEEP_SECONDS = 30.0
# How often a process that does not run the beat schedule tries again to take it over (its holder may stop).
BEAT_LOCK_RETRY_SECONDS = 30.0
# Threads of the served process that run tasks: two, so that a beat job (a day's close) never holds back a
# turn's deadline.
TASK_THREADS = 2


@dataclass(order=True)
class _Due:
    """One run waiting for its moment: a task queued for a moment, or a beat entry's next run."""

    at: datetime
    order: int
    task: str = field(compare=False)
    args: Sequence[Any] = field(compare=False, default=())
    kwargs: Mapping[str, Any] = field(compare=False, default_factory=dict)
    entry: "_BeatEntry | None" = field(compare=False, default=None)


@dataclass
class _BeatEntry:
    name: str
    task: str
    schedule: Any
    args: Sequence[Any]
    kwargs: Mapping[str, Any]
    last_run_at: datetime
    running: bool = False

    def first_at(self) -> datetime:
        remaining: timedelta = self.schedule.remaining_estimate(self.last_run_at)
        return datetime.now(UTC) + remaining

    def check(self) -> tuple[bool, datetime]:
        """Whether the entry is due now (then its run counts from now, as beat's does), and when to check it
        next. A timer that wakes a little early finds it not due yet, and checks again at its moment."""
        due, seconds = self.schedule.is_due(self.last_run_at)
        now: datetime = self.schedule.now()
        if due:
            self.last_run_at = now
        return bool(due), now + timedelta(seconds=float(seconds))


class Scheduler:
    """Beat's schedule and the delayed tasks, run in this process by one timer thread; see the module."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._pid: int | None = None
        self._stopping = False
        self._due: list[_Due] = []
        self._order = itertools.count()
        self._timer: threading.Thread | None = None
        self._threads: ThreadPoolExecutor | None = None
        self._apart_thread: ThreadPoolExecutor | None = None
        self._apart: _WorkerProcess | None = None
        self._beat_lock: IO[bytes] | None = None
        self._beat_lock_tried_at: datetime | None = None
        self._app: Any = None

    def bind(self, app: Any) -> None:
        """The Celery app whose tasks and beat schedule it runs: kingscorner/celery.py binds its own as it
        makes it (so that this module imports no app, and the app imports it)."""
        self._app = app

    @property
    def app(self) -> Any:
        if self._app is None:
            raise RuntimeError("the in-process scheduler is bound to no Celery app (kingscorner/celery.py)")
        return self._app

    @property
    def running(self) -> bool:
        """Whether this process's scheduler runs (a forked child does not inherit its parent's)."""
        return self._pid == os.getpid() and not self._stopping

    def start(self) -> bool:
        """Starts the scheduler in this process if it is on and not started yet; whether it runs."""
        from django.conf import settings

        app = self.app
        if not settings.IN_PROCESS_SCHEDULER or not app.conf.task_always_eager:
            return False
        with self._lock:
            if self.running:
                return True
            app.loader.import_default_modules()
            self._pid = os.getpid()
            self._stopping = False
            self._due = []
            self._beat_lock = None
            self._beat_lock_tried_at = None
            self._threads = ThreadPoolExecutor(TASK_THREADS, thread_name_prefix="scheduler-task")
            # One thread waits for the worker process, which runs one task at a time.
            self._apart_thread = ThreadPoolExecutor(1, thread_name_prefix="scheduler-apart")
            self._apart = _WorkerProcess()
            self._timer = threading.Thread(target=self._run, name="scheduler", daemon=True)
            self._timer.start()
        logger.info("the in-process scheduler runs (no broker): beat's schedule and delayed tasks")
        return True

    def stop(self) -> None:
        """Stops the timer, drops what waits, ends the worker process and lets the runs in progress end."""
        with self._lock:
            if not self.running:
                return
            self._stopping = True
            self._due = []
            self._lock.notify_all()
            timer, beat_lock, apart = self._timer, self._beat_lock, self._apart
            pools = (self._threads, self._apart_thread)
            self._beat_lock = None
        if timer is not None:
            timer.join(timeout=5)
        if apart is not None:
            apart.stop()
        for pool in pools:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        if beat_lock is not None:
            beat_lock.close()

    def call_at(
        self, task: str, args: Sequence[Any] | None, kwargs: Mapping[str, Any] | None, at: datetime
    ) -> None:
        """Runs the task named `task` at `at` (at once when it is past)."""
        with self._lock:
            self._push(_Due(at=at, order=next(self._order), task=task, args=args or (), kwargs=kwargs or {}))

    def run_now(self, task: str, args: Sequence[Any] | None, kwargs: Mapping[str, Any] | None) -> None:
        """Runs the task named `task` as soon as a runner is free, without waiting for it."""
        self.call_at(task, args, kwargs, datetime.now(UTC))

    def _push(self, due: _Due) -> None:
        heapq.heappush(self._due, due)
        self._lock.notify_all()

    # --- the timer thread ---------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._stopping:
                    return
                self._beat_take_over()
                now = datetime.now(UTC)
                ready = []
                while self._due and self._due[0].at <= now:
                    ready.append(heapq.heappop(self._due))
                if not ready:
                    wait = MAX_SLEEP_SECONDS
                    if self._due:
                        wait = min(wait, (self._due[0].at - now).total_seconds())
                    if self._beat_lock is None:
                        wait = min(wait, BEAT_LOCK_RETRY_SECONDS)
                    self._lock.wait(timeout=max(wait, 0.0))
                    continue
            for due in ready:
                self._dispatch(due)

    def _beat_take_over(self) -> None:
        """Takes the beat schedule on when no other process of this database runs it; called with the lock."""
        now = datetime.now(UTC)
        if self._beat_lock is not None or (
            self._beat_lock_tried_at is not None
            and now - self._beat_lock_tried_at < timedelta(seconds=BEAT_LOCK_RETRY_SECONDS)
        ):
            return
        self._beat_lock_tried_at = now
        lock_file = open(_beat_lock_path(), "ab")  # noqa: SIM115 - held open for the process's life
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock_file.close()
            return
        self._beat_lock = lock_file
        for entry in _beat_entries(now):
            self._push(_Due(at=entry.first_at(), order=next(self._order), task=entry.task, entry=entry))

    def _dispatch(self, due: _Due) -> None:
        app = self.app
        entry = due.entry
        if entry is not None:
            with self._lock:
                is_due, next_at = entry.check()
                if not self._stopping:
                    self._push(_Due(at=next_at, order=next(self._order), task=entry.task, entry=entry))
                if not is_due:
                    return
                if entry.running:
                    # Still running: skipped, as beat's `expires` drops a queued run when the next is due.
                    return
                entry.running = True
            args, kwargs = entry.args, entry.kwargs
        else:
            args, kwargs = due.args, due.kwargs
        task = app.tasks.get(due.task)
        threads, apart_thread, apart = self._threads, self._apart_thread, self._apart
        if task is None or threads is None or apart_thread is None or apart is None:
            if task is None:
                logger.error("the in-process scheduler has no task named %s", due.task)
            _entry_done(entry)
            return
        try:
            if getattr(task, "cpu_bound", False):
                future = apart_thread.submit(apart.run, due.task, args, kwargs)
                future.add_done_callback(lambda _: _apart_done())
            else:
                future = threads.submit(_run_here, due.task, args, kwargs)
            future.add_done_callback(lambda _: _entry_done(entry))
        except RuntimeError:
            # Stopping: the pool takes nothing more.
            _entry_done(entry)


def _entry_done(entry: _BeatEntry | None) -> None:
    if entry is not None:
        entry.running = False


def _apart_done() -> None:
    """After a task of the worker process: without Redis, its writes' wake-ups stayed in that process, so this
    one wakes its person streams, which then read the broadcasts it may have added (a daily par)."""
    from django.conf import settings

    from games import notifications

    if not settings.REDIS_URL:
        notifications.publish(notifications.BROADCAST_CHANNEL_KEY, 0)


def _run_here(task_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Runs a task on this thread, as a worker would: an error is logged, and the thread's database connection
    is closed once its age is past CONN_MAX_AGE, as after a request."""
    from django.db import close_old_connections

    app = scheduler.app
    close_old_connections()
    try:
        app.tasks[task_name](*args, **kwargs)
    except Exception:
        logger.exception("the in-process scheduler's run of %s failed", task_name)
    finally:
        close_old_connections()


def _beat_entries(now: datetime) -> list[_BeatEntry]:
    from celery.schedules import maybe_schedule
    from django.conf import settings

    app = scheduler.app
    return [
        _BeatEntry(
            name=name,
            task=str(entry["task"]),
            schedule=maybe_schedule(entry["schedule"], app=app),
            args=cast(Sequence[Any], entry.get("args", ())),
            kwargs=cast(Mapping[str, Any], entry.get("kwargs", {})),
            last_run_at=now,
        )
        for name, entry in settings.IN_PROCESS_BEAT_SCHEDULE.items()
    ]


def _beat_lock_path() -> Path:
    """One lock file per database, so that of the processes serving one database one runs the beat."""
    from django.db import connection

    database = connection.settings_dict
    key = "|".join(str(database.get(part, "")) for part in ("ENGINE", "HOST", "PORT", "NAME"))
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"kingscorner-beat-{digest}.lock"


class _WorkerProcess:
    """A process of its own, started on first use (spawned: a fresh interpreter that sets Django up), that
    runs the CPU-heavy tasks one at a time; started again if it dies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: Any = None
        self._connection: Connection | None = None
        self._stopped = False

    def run(self, task_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        with self._lock:
            if self._stopped:
                return
            if self._process is None or not self._process.is_alive():
                context = multiprocessing.get_context("spawn")
                ours, theirs = context.Pipe()
                self._process = context.Process(
                    target=_worker_process_main, args=(theirs,), name="scheduler-worker", daemon=True
                )
                self._process.start()
                theirs.close()
                self._connection = ours
            connection = self._connection
            assert connection is not None
            try:
                connection.send((task_name, list(args), dict(kwargs)))
                connection.recv()
            except (EOFError, OSError) as error:
                if not self._stopped:
                    logger.error("the scheduler's worker process ended during %s (%s)", task_name, error)
                self._process = None

    def stop(self) -> None:
        self._stopped = True
        process = self._process
        if process is not None and process.is_alive():
            # Its work is a search whose result is stored in one write at its end, or not at all: the next
            # run does it again.
            process.terminate()
            process.join(timeout=5)


def _worker_process_main(connection: Connection) -> None:
    """The worker process: sets Django up, then runs each task it is sent and answers when it is done."""
    import django

    # Ctrl-C in the server's terminal reaches this process too: the server ends it when it stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Setting Django up imports kingscorner, whose Celery app binds itself to this process's scheduler.
    django.setup()
    app = scheduler.app
    app.loader.import_default_modules()
    while True:
        try:
            task_name, args, kwargs = connection.recv()
        except EOFError:
            return
        _run_here(task_name, args, kwargs)
        connection.send(None)


scheduler = Scheduler()
