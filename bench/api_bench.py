"""Latency of the games API as deployed (gunicorn with the deployed configuration, PostgreSQL on loopback, and
REDIS_URL set, so that the rate limit counts every request in Redis): p50 and p99 of reading the player,
reading a game, one play, and an end_turn against three normal and three sharp opponents, as multiples of the
floor, with the ratios to GET /api/v1/players/me beside, and the goals checked. With --baseline-ref, another
commit runs beside this checkout in the same run, and every figure is compared with it.

The floor is what any request of this stack costs: a bare Django view (no DRF) behind every middleware of the
product, that runs one prepared statement, the player by the hash of the request's token, and answers with a
small JSON body. It exists only in the benchmark's own URL conf (bench/floor/: the checkout's settings with
ROOT_URLCONF replaced), which both servers run, so that each checkout has its own floor, measured in the same
rounds as its requests.

    .venv/bin/python bench/api_bench.py [--requests 300] [--baseline-ref 897728a]
        [--database-url postgres://postgres@127.0.0.1:5432/postgres] [--database-name kingscorner_bench]
        [--redis-url redis://127.0.0.1:6379/11]

Each checkout gets a database of its own on that server (`<database-name>` and `<database-name>_baseline`,
made afresh and migrated) and a gunicorn of its own (one worker: the client is sequential), both up for the
whole run. Every round times each kind of request once on each checkout, the kinds in a shuffled order and the
checkouts in turn, so that drifts in the machine's load fall on all alike. Only the request named in a row is
timed; the bookkeeping around it (new games, ending a turn with nothing to play) is not.

The rate limits are raised to 1,000,000 a minute (RATE_LIMIT_ANON and RATE_LIMIT_USER in the servers'
environment) so that the bench is never refused; every request is still counted in Redis as in production.
"""

import argparse
import http.client
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.checkouts import Checkout, checkouts  # noqa: E402
from tests.support.stack import Stack, database_create  # noqa: E402

# The benchmark's own settings and URL conf, with the floor view.
FLOOR_CONF = Path(__file__).resolve().parent / "floor"

FLOOR = "floor (bare view)"
ME = "GET players/me"
PLAY = "play move"
END_NORMAL = "end_turn vs 3 normal"
END_SHARP = "end_turn vs 3 sharp"


class Api:
    def __init__(self, port: int) -> None:
        self.port = port
        self.token = ""

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
        """One request on a fresh connection (gunicorn's sync workers close it after each response);
        returns the status, the parsed body and the seconds from sending to the last byte read."""
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        payload = json.dumps(body).encode() if body is not None else None
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        start = time.perf_counter()
        conn.request(method, path, body=payload, headers=headers)
        response = conn.getresponse()
        data = response.read()
        elapsed = time.perf_counter() - start
        conn.close()
        return response.status, json.loads(data) if data else None, elapsed


class Games:
    """Keeps one game going at a level, starting a new one when it is over."""

    def __init__(self, api: Api, level: str) -> None:
        self.api = api
        self.level = level
        self.view: dict[str, Any] = {}
        self.renew()

    def renew(self) -> None:
        status, self.view, _ = self.api.call(
            "POST", "/api/v1/games", {"level": self.level, "target_score": None, "opponents": 3}
        )
        assert status == 201, self.view

    def moves(self, moves: list[dict[str, Any]]) -> float:
        body = {"moves": moves, "expected_version": self.view["version"]}
        status, view, elapsed = self.api.call("POST", f"/api/v1/games/{self.view['id']}/moves", body)
        assert status == 200, view
        self.view = view
        if view["status"] != "playing":
            self.renew()
        return elapsed

    def timed_play(self) -> float:
        while True:
            play = next((m for m in self.view["legal_moves"] if m["type"] == "play"), None)
            if play is not None:
                return self.moves([play])
            self.moves([{"type": "end_turn"}])

    def timed_end_turn(self) -> float:
        return self.moves([{"type": "end_turn"}])


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def request_kinds(api: Api) -> dict[str, Callable[[], float]]:
    status, player, _ = api.call("POST", "/api/v1/players", {"name": "bench"})
    assert status == 201, player
    api.token = player["token"]
    plays, normal, sharp = Games(api, "normal"), Games(api, "normal"), Games(api, "sharp")
    reading = Games(api, "normal")
    return {
        FLOOR: lambda: api.call("GET", "/bench/floor")[2],
        ME: lambda: api.call("GET", "/api/v1/players/me")[2],
        "GET a game": lambda: api.call("GET", f"/api/v1/games/{reading.view['id']}")[2],
        PLAY: plays.timed_play,
        END_NORMAL: normal.timed_end_turn,
        END_SHARP: sharp.timed_end_turn,
    }


def measure(apis: list[Api], requests: int, warmup: int, max_seconds: float) -> list[dict[str, list[float]]]:
    kinds = [request_kinds(api) for api in apis]
    samples: list[dict[str, list[float]]] = [{name: [] for name in side} for side in kinds]
    # Every round times each kind once on each checkout, in a fresh order, so that drifts in the machine's
    # load and whatever one request leaves behind for the next (caches, the WAL writer, garbage) fall on all
    # kinds and both checkouts alike.
    order = random.Random(0)
    names = list(kinds[0])
    sides = list(range(len(apis)))
    stop = time.monotonic() + max_seconds
    for round_number in range(warmup + requests):
        order.shuffle(sides)
        for side in sides:
            order.shuffle(names)
            for name in names:
                elapsed = kinds[side][name]()
                if round_number >= warmup:
                    samples[side][name].append(elapsed)
        if time.monotonic() > stop:
            print(f"stopped after {round_number + 1} rounds: --max-seconds reached", file=sys.stderr)
            break
    return samples


def table(samples: dict[str, list[float]]) -> list[str]:
    floor50, floor99 = percentile(samples[FLOOR], 0.5), percentile(samples[FLOOR], 0.99)
    me50, me99 = percentile(samples[ME], 0.5), percentile(samples[ME], 0.99)
    lines = [
        f"{'request':<22} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'p50 ×fl':>8} {'p99 ×fl':>8} "
        f"{'p50 ×me':>8} {'p99 ×me':>8}"
    ]
    for name, values in samples.items():
        if not values:
            continue
        p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
        lines.append(
            f"{name:<22} {len(values):>5} {p50 * 1000:>8.2f} {p99 * 1000:>8.2f} "
            f"{p50 / floor50:>8.2f} {p99 / floor99:>8.2f} {p50 / me50:>8.2f} {p99 / me99:>8.2f}"
        )
    return lines


def _goal(text: str, value: float, limit: float) -> str:
    return f"  {text:<58} {value:>6.2f}  (goal ≤ {limit:g}: {'met' if value <= limit else 'NOT met'})"


def report(labels: list[str], samples: list[dict[str, list[float]]]) -> str:
    lines: list[str] = ["×fl: a multiple of the floor's; ×me: of GET players/me's", ""]
    for label, side in zip(labels, samples, strict=True):
        lines += [f"{label}:", *table(side), ""]
    this = {name: percentile(values, 0.5) for name, values in samples[0].items()}
    lines += [
        f"goals ({labels[0]}):",
        _goal("GET players/me p50 / floor p50", this[ME] / this[FLOOR], 1.3),
        _goal("play p50 / floor p50", this[PLAY] / this[FLOOR], 2.0),
        _goal("end_turn vs 3 normal p50 / floor p50", this[END_NORMAL] / this[FLOOR], 3.0),
        "the earlier goals, against GET players/me:",
        _goal("play p50 / GET players/me p50", this[PLAY] / this[ME], 1.3),
        _goal("end_turn vs 3 normal p50 / GET players/me p50", this[END_NORMAL] / this[ME], 2.0),
    ]
    if len(samples) > 1:
        other = {name: percentile(values, 0.5) for name, values in samples[1].items()}
        lines += ["", f"p50 this / {labels[1]}:"]
        lines += [f"  {name:<22} {this[name] / other[name]:>6.2f}" for name in this]
    return "\n".join(lines)


def server_start(checkout: Checkout, options: argparse.Namespace) -> Stack:
    name = options.database_name + ("" if checkout.slug == "this" else f"_{checkout.slug}")
    stack = Stack(
        database_url=database_create(options.database_url, name, fresh=True),
        broker_url="memory://",
        cache_url=options.redis_url,
        # Tasks in-process (no request enqueues one); no worker recycling, whose boot would show as a stall.
        # The benchmark's settings (the checkout's, with the floor's URL conf) from bench/floor/, after the
        # checkout on the import path.
        extra_env={
            "CELERY_TASK_ALWAYS_EAGER": "true",
            "GUNICORN_MAX_REQUESTS": "0",
            "DJANGO_SETTINGS_MODULE": "floor_settings",
            "PYTHONPATH": os.pathsep.join([str(checkout.root), str(FLOOR_CONF)]),
        },
        root=checkout.root,
    )
    stack.manage("migrate", "--noinput", "--verbosity", "0")
    stack.start_web(workers=options.workers)
    return stack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=300, help="timed requests of each kind")
    parser.add_argument("--warmup", type=int, default=20, help="untimed rounds first")
    parser.add_argument("--max-seconds", type=float, default=300, help="stop measuring after this long")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a PostgreSQL server; the bench uses databases of its own there",
    )
    parser.add_argument("--database-name", default="kingscorner_bench")
    parser.add_argument(
        "--redis-url", default="redis://127.0.0.1:6379/11", help="the Redis database of the rate limits"
    )
    parser.add_argument("--workers", type=int, default=1, help="gunicorn workers (the client is sequential)")
    parser.add_argument("--baseline-ref", help="a commit to run beside this checkout, e.g. 897728a")
    options = parser.parse_args(argv)

    with checkouts(options.baseline_ref) as sides:
        stacks: list[Stack] = []
        try:
            for checkout in sides:
                stacks.append(server_start(checkout, options))
            samples = measure(
                [Api(stack.port) for stack in stacks], options.requests, options.warmup, options.max_seconds
            )
        finally:
            for stack in stacks:
                stack.close()
    print(
        f"gunicorn ({options.workers} worker{'s' if options.workers > 1 else ''} each), PostgreSQL, "
        f"rate limits counted in Redis ({options.redis_url})\n"
    )
    print(report([checkout.label for checkout in sides], samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
