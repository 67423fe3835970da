"""The in-process scheduler (kingscorner/scheduler.py): tasks queued for a moment run at that moment, beat's
schedule runs in one process of those sharing a database, CPU-heavy tasks run in a process of their own, and
nothing of it runs unless it is on and tasks run in-process."""

import fcntl
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from celery.schedules import crontab
from django.conf import settings as django_settings

from daily.tasks import daily_pars_compute
from games import notifications, scheduling
from games.models import Game
from games.tasks import turn_time_out
from kingscorner import scheduler as scheduler_module
from kingscorner.celery import app
from kingscorner.scheduler import Scheduler, scheduler
from tests.support.stack import ROOT

RECORD = "tests.test_scheduler.record"
runs: list[tuple[str, float, int]] = []
ran = threading.Condition()


@app.task(name=RECORD)  # type: ignore[untyped-decorator]
def record(label: str) -> None:
    with ran:
        runs.append((label, time.monotonic(), threading.get_ident()))
        ran.notify_all()


def _runs_of(label: str) -> list[float]:
    return [at for name, at, _ in runs if name == label]


def _wait_for_runs(label: str, count: int, timeout: float = 10) -> list[float]:
    with ran:
        ran.wait_for(lambda: len(_runs_of(label)) >= count, timeout=timeout)
    return _runs_of(label)


@pytest.fixture
def running(monkeypatch: pytest.MonkeyPatch) -> Iterator[Scheduler]:
    """The scheduler turned on, with a beat schedule of one entry every 0.2 s instead of the project's."""
    monkeypatch.setattr(django_settings, "IN_PROCESS_SCHEDULER", True)
    beat_schedule = {"tick": {"task": RECORD, "schedule": timedelta(seconds=0.2), "args": ("beat",)}}
    monkeypatch.setattr(django_settings, "IN_PROCESS_BEAT_SCHEDULE", beat_schedule)
    runs.clear()
    assert scheduler.start()
    try:
        yield scheduler
    finally:
        scheduler.stop()


def _settings_with(**env: str) -> Any:
    script = (
        "import json; from django.conf import settings as s; "
        "print(json.dumps([s.IN_PROCESS_SCHEDULER, str(s.IN_PROCESS_BEAT_SCHEDULE['daily-pars-compute']"
        "['schedule']), sorted(s.IN_PROCESS_BEAT_SCHEDULE) == sorted(s.CELERY_BEAT_SCHEDULE)]))"
    )
    base = {"PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "kingscorner.settings"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def test_the_scheduler_is_on_without_a_broker_off_with_one_and_the_environment_decides() -> None:
    every_minute = "<crontab: * * * * * (m/h/dM/MY/d)>"
    assert _settings_with() == [True, every_minute, True]
    assert _settings_with(CELERY_BROKER_URL="redis://127.0.0.1:6379/0") == [False, every_minute, True]
    assert _settings_with(IN_PROCESS_SCHEDULER="false") == [False, every_minute, True]
    assert _settings_with(CELERY_BROKER_URL="redis://127.0.0.1:6379/0", IN_PROCESS_SCHEDULER="true")[0]


def test_the_scheduler_is_off_under_tests_unless_one_turns_it_on() -> None:
    assert django_settings.IN_PROCESS_SCHEDULER is False
    assert not scheduler.start() and not scheduler.running


def test_it_does_not_start_while_tasks_go_to_a_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(django_settings, "IN_PROCESS_SCHEDULER", True)
    app.conf.task_always_eager = False
    try:
        assert not scheduler.start() and not scheduler.running
    finally:
        app.conf.task_always_eager = True


def test_a_task_queued_for_a_moment_runs_at_that_moment_and_not_before(running: Scheduler) -> None:
    queued_at = time.monotonic()
    record.apply_async(args=["countdown"], countdown=0.5)
    record.apply_async(args=["eta"], eta=datetime.now(UTC) + timedelta(seconds=0.3))
    assert _runs_of("countdown") == [] and _runs_of("eta") == []
    [eta_run] = _wait_for_runs("eta", 1)
    [countdown_run] = _wait_for_runs("countdown", 1)
    assert eta_run - queued_at >= 0.3 and countdown_run - queued_at >= 0.5
    # On a thread of the scheduler, not the caller's.
    assert all(thread != threading.get_ident() for _, _, thread in runs)


def test_without_the_scheduler_a_task_queued_for_a_moment_runs_at_once_as_before() -> None:
    runs.clear()
    record.apply_async(args=["eager"], countdown=60)
    assert _runs_of("eager") != []


def test_the_beat_schedule_runs_at_its_interval(running: Scheduler) -> None:
    started = time.monotonic()
    beats = _wait_for_runs("beat", 3)
    assert beats[0] - started >= 0.15
    assert all(later > earlier for earlier, later in zip(beats, beats[1:], strict=False))


def test_a_beat_entry_checked_a_moment_early_runs_once_at_its_moment() -> None:
    moment = [datetime(2026, 12, 2, 1, 19, 59, 999000, tzinfo=UTC)]
    every_minute = crontab(nowfun=lambda: moment[0], app=app)
    entry = scheduler_module._BeatEntry(
        name="close",
        task=RECORD,
        schedule=every_minute,
        args=(),
        kwargs={},
        last_run_at=datetime(2026, 12, 2, 1, 19, 0, 500000, tzinfo=UTC),
    )
    due, check_at = entry.check()
    assert not due and check_at <= datetime(2026, 12, 2, 1, 20, tzinfo=UTC)
    moment[0] = datetime(2026, 12, 2, 1, 20, 0, 1000, tzinfo=UTC)
    due, check_at = entry.check()
    assert due and check_at == datetime(2026, 12, 2, 1, 21, tzinfo=UTC)
    assert entry.check()[0] is False


def test_one_process_of_a_database_runs_the_beat_and_another_takes_it_over_when_it_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scheduler_module, "BEAT_LOCK_RETRY_SECONDS", 0.3)
    # Another process holds the beat: a lock of its own on the same file.
    holder = open(scheduler_module._beat_lock_path(), "ab")  # noqa: SIM115
    fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    monkeypatch.setattr(django_settings, "IN_PROCESS_SCHEDULER", True)
    beat_schedule = {"tick": {"task": RECORD, "schedule": timedelta(seconds=0.1), "args": ("beat",)}}
    monkeypatch.setattr(django_settings, "IN_PROCESS_BEAT_SCHEDULE", beat_schedule)
    runs.clear()
    assert scheduler.start()
    try:
        # Its own delayed tasks run all the same.
        record.apply_async(args=["delayed"], countdown=0.1)
        assert _wait_for_runs("delayed", 1)
        time.sleep(0.5)
        assert _runs_of("beat") == []
        holder.close()
        assert _wait_for_runs("beat", 1)
    finally:
        scheduler.stop()
        holder.close()


def test_a_cpu_bound_task_goes_to_the_worker_process_and_others_stay_in_the_served_process(
    running: Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert daily_pars_compute.cpu_bound and not turn_time_out.cpu_bound
    apart: list[tuple[str, Any, Any]] = []
    done = threading.Event()

    def run_apart(self: Any, task_name: str, args: Any, kwargs: Any) -> None:
        apart.append((task_name, args, kwargs))
        done.set()

    monkeypatch.setattr(scheduler_module._WorkerProcess, "run", run_apart)
    # Applied at once, it is not run on the caller's thread either.
    daily_pars_compute.delay()
    assert done.wait(timeout=10)
    assert apart == [("daily.tasks.daily_pars_compute", (), {})]


def test_a_worker_process_task_done_wakes_the_served_processs_person_streams_without_redis(
    running: Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without Redis a daily par the worker process stored would wake no stream here (its wake-ups stay in
    its own process): the served process wakes its person streams once the task is done."""
    monkeypatch.setattr(django_settings, "REDIS_URL", "")
    woken: list[str] = []
    done = threading.Event()

    def wake(key: str) -> None:
        woken.append(key)
        done.set()

    monkeypatch.setattr(notifications._waiters, "wake", wake)
    monkeypatch.setattr(scheduler_module._WorkerProcess, "run", lambda *_: None)
    daily_pars_compute.delay()
    assert done.wait(timeout=10)
    assert woken == [notifications.BROADCAST_CHANNEL_KEY]


def test_the_worker_process_is_another_process_that_runs_tasks_and_ends_with_the_scheduler() -> None:
    worker = scheduler_module._WorkerProcess()
    try:
        worker.run("celery.accumulate", [1, 2], {})
        process = worker._process
        assert process is not None and process.is_alive() and process.pid != os.getpid()
        worker.run("celery.accumulate", [3], {})
        assert worker._process is process
    finally:
        worker.stop()
    assert not process.is_alive()


@pytest.mark.django_db
def test_a_clocked_turn_is_queued_on_the_scheduler_for_its_deadline(
    running: Scheduler, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    queued: list[tuple[str, list[Any], datetime]] = []
    monkeypatch.setattr(
        scheduler, "call_at", lambda task, args, kwargs, at: queued.append((task, list(args), at))
    )
    deadline = datetime.now(UTC) + timedelta(seconds=30)
    game = Game(turn_deadline=deadline, version=7)
    with django_capture_on_commit_callbacks(execute=True):
        scheduling.turn_clock_schedule(game)
    assert queued == [(scheduling.TURN_TIME_OUT, [str(game.id), 7], deadline)]


@pytest.mark.django_db
def test_without_the_scheduler_a_clocked_turn_queues_nothing_when_tasks_run_at_once(
    django_capture_on_commit_callbacks: Any,
) -> None:
    assert app.conf.task_always_eager and not scheduler.running
    game = Game(turn_deadline=datetime.now(UTC) + timedelta(seconds=30), version=7)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        scheduling.turn_clock_schedule(game)
    assert callbacks == []
