"""One token opening streams as fast as it can, as deployed: nginx (deploy/nginx.conf's sizing and the
template) in front of gunicorn and uvicorn, the stream caps counted on Redis.

    .venv/bin/python bench/stream_flood.py [--opens 1000] [--concurrency 50] [--redis-url redis://127.0.0.1:6379/15]
        [--database-url postgres://postgres@127.0.0.1:5432/postgres]

It starts the services on a database of its own (made afresh, dropped at the end), registers a player with a
game, and opens `--opens` streams of it with the player's token, `--concurrency` at a time, holding each
accepted one open, while `GET health` is asked through nginx one request after another; it prints the
statuses of the opens, the Retry-After of the refusals, and health's statuses, p50, p99 and max.
"""

import argparse
import os
import shutil
import statistics
import sys
import uuid
from collections import Counter
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.flood import health_once, p99, stream_flood  # noqa: E402
from tests.support.stack import Proxy, Stack, call, database_create, database_drop  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--opens", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    args = parser.parse_args(argv)
    name = f"kingscorner_flood_{uuid.uuid4().hex[:12]}"
    redis.Redis.from_url(args.redis_url).flushdb()
    stack = Stack(
        database_url=database_create(args.database_url, name, fresh=True),
        broker_url="memory://",
        cache_url=args.redis_url,
        extra_env={"CELERY_TASK_ALWAYS_EAGER": "true", "NUM_PROXIES": "1", "RATE_LIMIT_USER": "1200/min"},
    )
    proxy: Proxy | None = None
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=2)
        stack.start_stream()
        proxy = Proxy(upstream=f"127.0.0.1:{stack.port}", stream_upstream=f"127.0.0.1:{stack.stream_port}")
        proxy.start()
        _, player, _ = call(proxy.port, "POST", "/api/v1/players", {"name": "Ada"})
        _, game, _ = call(proxy.port, "POST", "/api/v1/games", {"opponents": 1}, player["token"])
        quiet = [health_once(proxy.port)[1] for _ in range(50)]
        flood = stream_flood(
            proxy.port, game["id"], player["token"], opens=args.opens, concurrency=args.concurrency
        )
        flood.close()
        times = [seconds for _, seconds in flood.health]
        print(f"{args.opens} stream opens with one token, {args.concurrency} at a time, through nginx:")
        print(f"  statuses {dict(sorted(Counter(flood.statuses).items()))}")
        if flood.retry_after:
            print(f"  Retry-After of the refusals: {min(flood.retry_after)} to {max(flood.retry_after)} s")
        health_statuses = dict(Counter(status for status, _ in flood.health))
        print(f"  health during the flood: {len(times)} requests, statuses {health_statuses}")
        print(
            f"  health ms p50 {statistics.median(times) * 1000:.1f} p99 {p99(times) * 1000:.1f} "
            f"max {max(times) * 1000:.1f}; before the flood p50 {statistics.median(quiet) * 1000:.1f} "
            f"p99 {p99(quiet) * 1000:.1f}"
        )
        short = "worker_connections are not enough" in proxy.log()
        print(f"  nginx logged 'worker_connections are not enough': {short}")
    finally:
        if proxy is not None:
            proxy.close()
        stack.close()
        database_drop(args.database_url, name)
        shutil.rmtree(stack.logs, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
