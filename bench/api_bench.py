"""Latency of the games API under gunicorn against PostgreSQL on loopback: p50 and p99 of reading the player,
reading a game, one play, and an end_turn against three normal and three sharp opponents, side by side and as
ratios to GET /api/v1/players/me.

    .venv/bin/python bench/api_bench.py [--requests 300] [--database-url postgres://postgres@127.0.0.1:5432/postgres]

It creates (or reuses) the database `kingscorner_bench` on that server, migrates it, starts gunicorn on a free
port, times the kinds of request interleaved (every round times each kind once, in a shuffled order), prints
the table and stops the server. Only the request named in a row is timed; the bookkeeping around it (new
games, ending a turn with nothing to play) is not.
"""

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.stack import ROOT, database_create, free_port  # noqa: E402

BENCH_DATABASE = "kingscorner_bench"


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


def wait_until_up(api: Api, server: subprocess.Popen[bytes], deadline: float) -> None:
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("gunicorn exited before answering")
        try:
            if api.call("GET", "/api/v1/health")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("gunicorn did not answer in time")


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


def measure(api: Api, requests: int, warmup: int, max_seconds: float) -> dict[str, list[float]]:
    status, player, _ = api.call("POST", "/api/v1/players", {"name": "bench"})
    assert status == 201, player
    api.token = player["token"]
    plays, normal, sharp = Games(api, "normal"), Games(api, "normal"), Games(api, "sharp")
    reading = Games(api, "normal")
    kinds: dict[str, Callable[[], float]] = {
        "GET players/me": lambda: api.call("GET", "/api/v1/players/me")[2],
        "GET a game": lambda: api.call("GET", f"/api/v1/games/{reading.view['id']}")[2],
        "play move": plays.timed_play,
        "end_turn vs 3 normal": normal.timed_end_turn,
        "end_turn vs 3 sharp": sharp.timed_end_turn,
    }
    samples: dict[str, list[float]] = {name: [] for name in kinds}
    # Every round times each kind once, in a fresh order, so that drifts in the machine's load and whatever
    # one request leaves behind for the next (caches, the WAL writer, garbage) fall on all kinds alike.
    order = random.Random(0)
    names = list(kinds)
    stop = time.monotonic() + max_seconds
    for round_number in range(warmup + requests):
        order.shuffle(names)
        for name in names:
            elapsed = kinds[name]()
            if round_number >= warmup:
                samples[name].append(elapsed)
        if time.monotonic() > stop:
            print(f"stopped after {round_number + 1} rounds: --max-seconds reached", file=sys.stderr)
            break
    return samples


def report(samples: dict[str, list[float]]) -> str:
    base50 = percentile(samples["GET players/me"], 0.5)
    base99 = percentile(samples["GET players/me"], 0.99)
    lines = [
        f"{'request':<22} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'p50 ×me':>8} {'p99 ×me':>8}",
    ]
    for name, values in samples.items():
        if not values:
            continue
        p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
        lines.append(
            f"{name:<22} {len(values):>5} {p50 * 1000:>8.2f} {p99 * 1000:>8.2f} "
            f"{p50 / base50:>8.2f} {p99 / base99:>8.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=300, help="timed requests of each kind")
    parser.add_argument("--warmup", type=int, default=20, help="untimed rounds first")
    parser.add_argument("--max-seconds", type=float, default=180, help="stop measuring after this long")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a PostgreSQL server; the bench uses its own database there",
    )
    parser.add_argument("--workers", type=int, default=1, help="gunicorn workers (the client is sequential)")
    options = parser.parse_args(argv)

    env = {
        **os.environ,
        "DATABASE_URL": database_create(options.database_url, BENCH_DATABASE, fresh=False),
        "CONN_MAX_AGE": "600",
        "RATE_LIMIT_ANON": "1000000/min",
        "RATE_LIMIT_USER": "1000000/min",
        "DEBUG": "false",
        "LOG_LEVEL": "WARNING",
    }
    python = str(Path(sys.executable))
    subprocess.run([python, "manage.py", "migrate", "--verbosity", "0"], cwd=ROOT, env=env, check=True)
    port = free_port()
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    command = [gunicorn, "kingscorner.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", str(options.workers)]
    server = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        api = Api(port)
        wait_until_up(api, server, time.monotonic() + 30)
        samples = measure(api, options.requests, options.warmup, options.max_seconds)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    print(report(samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
