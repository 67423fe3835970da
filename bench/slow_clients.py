"""Slow clients: the latency of `health` and of a move while twice as many slow clients as gunicorn has
workers trickle request bodies one byte a second, through nginx (deploy/nginx.conf.template, on the machine's
nginx) and sent to gunicorn directly.

    .venv/bin/python bench/slow_clients.py [--web-workers 4] [--slow-clients 8] [--hold-seconds 20]
        [--database-url postgres://postgres@127.0.0.1:5432/postgres]

It starts gunicorn on a database of its own (made afresh under a unique name and dropped at the end; no Redis:
the cache and the tasks are in-process), nginx in front, and for each way in: registers a player and starts a
game, starts the slow clients, waits two seconds, then times one `GET health` and one move (a play, else
end_turn) sent together, and waits for the slow clients to finish. A request not answered within 60 s shows
as a timeout.
"""

import argparse
import json
import os
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.stack import Proxy, SlowClient, Stack, call, database_create, database_drop  # noqa: E402


def measure(port: int, slow_clients: int, hold_seconds: int) -> dict[str, tuple[int, float]]:
    _, player, _ = call(port, "POST", "/api/v1/players", {"name": "Bench"})
    token = player["token"]
    _, game, _ = call(port, "POST", "/api/v1/games", {"opponents": 1}, token)
    move = next((m for m in game["legal_moves"] if m["type"] == "play"), {"type": "end_turn"})
    # A body of exactly `hold_seconds` bytes, sent one byte a second.
    body = json.dumps({"name": "s" * (hold_seconds - 11)}, separators=(",", ":")).encode()
    slow = [SlowClient(port, "/api/v1/players", body) for _ in range(slow_clients)]
    for client in slow:
        client.start()
    time.sleep(2)
    # Both at once, so that each is measured while the slow clients hold their connections.
    move_body = {"moves": [move], "expected_version": game["version"]}
    with ThreadPoolExecutor(2) as pool:
        health = pool.submit(call, port, "GET", "/api/v1/health")
        moved = pool.submit(call, port, "POST", f"/api/v1/games/{game['id']}/moves", move_body, token)
        health_status, _, health_seconds = health.result()
        move_status, _, move_seconds = moved.result()
    for client in slow:
        client.join()
    return {"health": (health_status, health_seconds), "move": (move_status, move_seconds)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--slow-clients", type=int, default=8)
    parser.add_argument(
        "--hold-seconds", type=int, default=20, help="how long each slow client sends (>= 12)"
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    options = parser.parse_args(argv)
    if options.hold_seconds < 12:
        parser.error("--hold-seconds must be at least 12")

    name = f"kingscorner_slow_{uuid.uuid4().hex[:12]}"
    stack = Stack(
        database_url=database_create(options.database_url, name, fresh=True),
        broker_url="memory://",
        cache_url="",
        extra_env={"CELERY_TASK_ALWAYS_EAGER": "true", "NUM_PROXIES": "1"},
    )
    proxy = Proxy(upstream=f"127.0.0.1:{stack.port}")
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=options.web_workers)
        proxy.start()
        results = {
            "through nginx": measure(proxy.port, options.slow_clients, options.hold_seconds),
            "gunicorn directly": measure(stack.port, options.slow_clients, options.hold_seconds),
        }
    finally:
        proxy.close()
        stack.close()
        database_drop(options.database_url, name)

    print(
        f"{options.slow_clients} slow clients (one byte a second for {options.hold_seconds} s), "
        f"{options.web_workers} gunicorn workers"
    )
    print(f"{'way in':<20} {'health':>16} {'move':>16}")
    for way, figures in results.items():
        cells = [
            f"{status or 'timeout'} {seconds * 1000:>9.0f} ms"
            for status, seconds in (figures["health"], figures["move"])
        ]
        print(f"{way:<20} {cells[0]:>16} {cells[1]:>16}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
