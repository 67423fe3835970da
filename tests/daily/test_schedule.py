"""The beat schedule of the daily deal's job: static, in code, in UTC."""

import copy
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from celery.schedules import crontab
from django.conf import settings

from kingscorner.celery import app

PROJECT_DIR = Path(__file__).resolve().parents[2]
ENTRY: dict[str, Any] = settings.CELERY_BEAT_SCHEDULE["daily-deals-create"]


def _at(moment: datetime) -> crontab:
    schedule = copy.copy(ENTRY["schedule"])
    schedule.nowfun = lambda: moment
    return schedule


def test_the_job_runs_the_task_at_five_past_midnight_and_noon_utc() -> None:
    schedule = ENTRY["schedule"]
    assert ENTRY["task"] == "daily.tasks.daily_deals_create"
    app.loader.import_default_modules()  # what a worker does at start: it finds the apps' tasks modules
    assert ENTRY["task"] in app.tasks
    assert isinstance(schedule, crontab)
    assert (schedule.minute, schedule.hour) == ({5}, {0, 12})
    assert schedule.day_of_week == set(range(7))
    assert app.conf.timezone == "UTC" and app.conf.enable_utc


def test_the_job_is_due_at_its_utc_times_and_not_between() -> None:
    last_run = datetime(2026, 3, 4, 12, 5, tzinfo=UTC)
    due, _ = _at(datetime(2026, 3, 5, 0, 4, tzinfo=UTC)).is_due(last_run)
    assert not due
    due, next_in = _at(datetime(2026, 3, 5, 0, 5, 30, tzinfo=UTC)).is_due(last_run)
    assert due
    assert next_in == timedelta(hours=11, minutes=59, seconds=30).total_seconds()
    due, next_in = _at(datetime(2026, 3, 5, 6, 0, tzinfo=UTC)).is_due(datetime(2026, 3, 5, 0, 5, tzinfo=UTC))
    assert not due
    assert next_in == timedelta(hours=6, minutes=5).total_seconds()


def test_a_run_missed_by_beat_is_made_up_at_its_next_check() -> None:
    due, _ = _at(datetime(2026, 3, 5, 3, 0, tzinfo=UTC)).is_due(datetime(2026, 3, 4, 0, 5, tzinfo=UTC))
    assert due


def test_an_interval_from_the_environment_replaces_the_schedule_for_end_to_end_runs() -> None:
    script = (
        "import json; from django.conf import settings as s; "
        "e = s.CELERY_BEAT_SCHEDULE['daily-deals-create']; print(json.dumps(e['schedule'].total_seconds()))"
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "kingscorner.settings",
        "DAILY_BEAT_INTERVAL_SECONDS": "7",
    }
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=PROJECT_DIR, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == 7


def test_the_closing_job_runs_every_minute_so_a_day_closes_within_a_minute_of_its_deadline() -> None:
    entry: dict[str, Any] = settings.CELERY_BEAT_SCHEDULE["daily-attempts-close"]
    schedule = entry["schedule"]
    assert entry["task"] == "daily.tasks.daily_attempts_close"
    app.loader.import_default_modules()
    assert entry["task"] in app.tasks
    assert isinstance(schedule, crontab)
    assert (schedule.minute, schedule.hour) == (set(range(60)), set(range(24)))
    assert entry["options"]["expires"] <= 60


def test_the_par_job_runs_every_five_minutes_so_a_days_par_follows_its_reveal_within_minutes() -> None:
    entry: dict[str, Any] = settings.CELERY_BEAT_SCHEDULE["daily-pars-compute"]
    schedule = entry["schedule"]
    assert entry["task"] == "daily.tasks.daily_pars_compute"
    app.loader.import_default_modules()
    assert entry["task"] in app.tasks
    assert isinstance(schedule, crontab)
    assert (schedule.minute, schedule.hour) == (set(range(0, 60, 5)), set(range(24)))
    assert entry["options"]["expires"] <= 5 * 60
