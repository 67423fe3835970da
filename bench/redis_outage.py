"""Redis outage: request latencies and statuses while the rate-limit cache's Redis answers, is stopped
(connections refused), hangs (SIGSTOP: connections accepted, never answered), and after it resumes.

    .venv/bin/python bench/redis_outage.py [--web-workers 2] [--seconds 15]
        [--database-url postgres://postgres@127.0.0.1:5432/postgres]

It starts a redis-server of its own on a free port (never the shared one) and gunicorn on a database of its
own (made afresh under a unique name, dropped at the end; tasks in-process), then in each phase sends
requests one after another for `--seconds`, cycling through `GET players/me` (with a token), `POST analysis`
(without one) and `GET health`, and prints per phase p50 and max latency and the statuses seen.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.stack import Stack, call, database_create, database_drop, free_port  # noqa: E402


def phase(port: int, token: str, seconds: float) -> tuple[list[float], Counter[str]]:
    cycle = [
        ("GET players/me", "GET", "/api/v1/players/me", None, token),
        ("POST analysis", "POST", "/api/v1/analysis", {"hand": ["QD"]}, ""),
        ("GET health", "GET", "/api/v1/health", None, ""),
    ]
    latencies: list[float] = []
    outcomes: Counter[str] = Counter()
    deadline = time.monotonic() + seconds
    number = 0
    while time.monotonic() < deadline:
        label, method, path, body, bearer = cycle[number % len(cycle)]
        number += 1
        status, answer, elapsed = call(port, method, path, body, bearer)
        latencies.append(elapsed)
        detail = f" {answer['status']}" if label == "GET health" and status == 200 else ""
        outcomes[f"{label} {status or 'timeout'}{detail}"] += 1
    return latencies, outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=15, help="length of each phase")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    options = parser.parse_args(argv)
    binary = shutil.which("redis-server")
    if binary is None:
        parser.error("needs redis-server")

    redis_port = free_port()
    server = subprocess.Popen(
        [binary, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    cache_url = f"redis://127.0.0.1:{redis_port}/0"
    name = f"kingscorner_redis_outage_{uuid.uuid4().hex[:12]}"
    stack = Stack(
        database_url=database_create(options.database_url, name, fresh=True),
        broker_url="memory://",
        cache_url=cache_url,
        # No worker recycling: a recycled worker's boot would show here as a stall that Redis did not cause.
        extra_env={"CELERY_TASK_ALWAYS_EAGER": "true", "GUNICORN_MAX_REQUESTS": "0"},
    )
    results: dict[str, tuple[list[float], Counter[str]]] = {}
    try:
        for _ in range(100):
            try:
                redis.Redis.from_url(cache_url).ping()
                break
            except redis.RedisError:
                time.sleep(0.1)
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=options.web_workers)
        _, player, _ = call(stack.port, "POST", "/api/v1/players", {"name": "Bench"})
        token = player["token"]

        results["Redis answers"] = phase(stack.port, token, options.seconds)
        server.send_signal(signal.SIGSTOP)
        results["Redis hung (SIGSTOP)"] = phase(stack.port, token, options.seconds)
        server.send_signal(signal.SIGCONT)
        # The backend leaves Redis alone for 5 s after a failure.
        time.sleep(6)
        results["Redis resumed"] = phase(stack.port, token, options.seconds)
        server.terminate()
        server.wait()
        results["Redis stopped"] = phase(stack.port, token, options.seconds)
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGCONT)
            server.kill()
            server.wait()
        stack.close()
        database_drop(options.database_url, name)

    print(
        f"requests one at a time for {options.seconds:g} s per phase, {options.web_workers} gunicorn workers"
    )
    print(f"{'phase':<22} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}  outcomes")
    for label, (latencies, outcomes) in results.items():
        ordered = sorted(latencies)
        p50 = ordered[len(ordered) // 2] * 1000
        p99 = ordered[min(len(ordered) - 1, round(0.99 * len(ordered)))] * 1000
        outcome_text = ", ".join(f"{key} ×{count}" for key, count in sorted(outcomes.items()))
        worst = ordered[-1] * 1000
        print(f"{label:<22} {len(ordered):>5} {p50:>8.1f} {p99:>8.1f} {worst:>8.1f}  {outcome_text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
