"""GET health's p50 and p99 on the quick start's server while its in-process scheduler computes par.

Serves the API as the quick start does (uvicorn, no broker, the in-process scheduler on, a scratch SQLite
database; `--postgres` for a scratch PostgreSQL one), makes the deals of `--days` past days through the API
(their seeds are revealed: their days are over), and keeps one client asking `GET health`, one request at a
time, and another sending a write (`POST players`) five times a second. At the next minute the scheduler
closes those days and starts their par searches, newest first, in its worker process. It prints each
request's p50 and p99 before that (idle) and while the searches run (until the oldest day's par is
published), and the time par took per day. Then the same with the search on a thread of the served process
instead of the worker process (unless `--no-thread`), and the ratios of health's p99s.

    .venv/bin/python bench/quick_start_par.py [--days 6] [--postgres postgres://postgres@127.0.0.1:5432/postgres]
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.stack import Stack, call, database_create, database_drop  # noqa: E402


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class Client(threading.Thread):
    """Sends one request over and over, one at a time, `pause` seconds apart, and keeps (when each was sent,
    its seconds)."""

    def __init__(self, port: int, method: str, path: str, body: object, pause: float) -> None:
        super().__init__(daemon=True)
        self.port, self.method, self.path, self.body, self.pause = port, method, path, body, pause
        self.samples: list[tuple[float, float]] = []
        self.errors = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            sent = time.monotonic()
            status, _, seconds = call(self.port, self.method, self.path, self.body, timeout=30)
            if not 200 <= status < 300:
                self.errors += 1
            self.samples.append((sent, seconds))
            time.sleep(self.pause)

    def between(self, start: float, end: float) -> list[float]:
        return [seconds for sent, seconds in self.samples if start <= sent < end]


def _line(label: str, values: list[float]) -> str:
    if not values:
        return f"{label:<38} no requests"
    return (
        f"{label:<38} n={len(values):>5}  p50 {statistics.median(values) * 1000:7.2f} ms"
        f"  p99 {_percentile(values, 0.99) * 1000:7.2f} ms  max {max(values) * 1000:7.2f} ms"
    )


# The comparison: the same server with the par search on a thread of the served process, as it would run
# without the worker process (the task's `cpu_bound` turned off before serving).
ON_A_THREAD = (
    "import sys, uvicorn; from kingscorner.asgi import application; "
    "from daily.tasks import daily_pars_compute; daily_pars_compute.cpu_bound = False; "
    "uvicorn.run(application, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')"
)


MAKE_DEALS = (
    "from datetime import date; from daily import services; "
    "[services.daily_deal_get_or_create(day=date.fromisoformat(day)) for day in {days}]"
)


def measure(where: str, days_back: int, postgres: str) -> None:
    """Serves, makes the past days' deals, and measures health idle and while their par is computed."""
    scratch = Path(tempfile.mkdtemp(prefix="kingscorner-quick-start-par-"))
    database_url = f"sqlite:///{scratch / 'db.sqlite3'}"
    name = f"kc_quick_start_par_{os.getpid()}"
    if postgres:
        database_url = database_create(postgres, name, fresh=True)
    stack = Stack(
        database_url=database_url,
        broker_url="memory://",
        cache_url="",
        extra_env={"CELERY_TASK_ALWAYS_EAGER": "true", "IN_PROCESS_SCHEDULER": "true"},
    )
    try:
        stack.manage("migrate", "--noinput")
        today = datetime.now(UTC).date()
        days = [today - timedelta(days=back) for back in range(2, 2 + days_back)]
        stack.manage("shell", "-c", MAKE_DEALS.format(days=[day.isoformat() for day in days]))
        # The scheduler's jobs run at the start of each minute: the server starts just after one, so that the
        # minute until the next is idle.
        now = datetime.now(UTC)
        boundary = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
        if (boundary - now).total_seconds() < 50:
            time.sleep((boundary - now).total_seconds() + 1)
            boundary += timedelta(minutes=1)
        if where == "process":
            stack.start_web(workers=1, asgi=True)
        else:
            stack.start_command("web", [sys.executable, "-c", ON_A_THREAD, str(stack.port)])
        for day in days:
            status, answer, _ = call(stack.port, "GET", f"/api/v1/daily/{day.isoformat()}")
            assert status == 200 and answer["par"] is None, (status, answer)
        client = Client(stack.port, "GET", "/api/v1/health", None, 0.005)
        # A write now and then: on SQLite a write waits for any transaction that writes.
        writer = Client(stack.port, "POST", "/api/v1/players", {"name": "Writer"}, 0.2)
        client.start()
        writer.start()
        print(f"par on {where_label(where)}: {len(days)} past days; idle until {boundary:%H:%M:%S} UTC ...")
        idle_start = time.monotonic()
        time.sleep((boundary - datetime.now(UTC)).total_seconds())
        searching_start = time.monotonic()
        published: dict[date, float] = {}
        while len(published) < len(days):
            for day in days:
                if day not in published:
                    status, _, _ = call(stack.port, "GET", f"/api/v1/daily/{day.isoformat()}/par")
                    if status == 200:
                        published[day] = time.monotonic()
            if time.monotonic() - searching_start > 60 * 30:
                raise RuntimeError(f"par not published within 30 minutes: {stack.log('web')}")
            time.sleep(0.25)
        searching_end = max(published.values())
        for each in (client, writer):
            each.stopping.set()
            each.join()
        idle = client.between(idle_start, searching_start)
        searching = client.between(searching_start + 1, searching_end)
        results[where] = (idle, searching)
        print(_line("  GET health, idle", idle))
        print(_line("  GET health, while par is computed", searching))
        print(_line("  POST players, idle", writer.between(idle_start, searching_start)))
        print(
            _line("  POST players, while par is computed", writer.between(searching_start + 1, searching_end))
        )
        print(
            f"  par of {len(days)} days in {searching_end - searching_start:.1f} s "
            f"({(searching_end - searching_start) / len(days):.1f} s a day, with the close); "
            f"errors: health {client.errors}, POST players {writer.errors}"
        )
    finally:
        stack.close()
        shutil.rmtree(scratch, ignore_errors=True)
        if postgres:
            database_drop(postgres, name)


def where_label(where: str) -> str:
    return "the worker process" if where == "process" else "a thread of the served process"


results: dict[str, tuple[list[float], list[float]]] = {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=6, help="past days whose par is computed (default 6)")
    parser.add_argument(
        "--postgres",
        default="",
        help="a PostgreSQL server URL to make a scratch database on, instead of SQLite (the quick start's)",
    )
    parser.add_argument(
        "--no-thread", action="store_true", help="skip the comparison with the par search on a thread"
    )
    arguments = parser.parse_args()
    for where in ("process",) if arguments.no_thread else ("process", "thread"):
        measure(where, arguments.days, arguments.postgres)
    for where, (idle, searching) in results.items():
        if idle and searching:
            ratio = _percentile(searching, 0.99) / _percentile(idle, 0.99)
            print(f"par on {where_label(where)}: health p99 while par is computed / idle: {ratio:.2f}x")
    if len(results) == 2 and all(searching for _, searching in results.values()):
        ratio = _percentile(results["thread"][1], 0.99) / _percentile(results["process"][1], 0.99)
        print(f"health p99 while par is computed, on a thread / in the worker process: {ratio:.2f}x")


if __name__ == "__main__":
    main()
