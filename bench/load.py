"""Load: N concurrent clients, each playing whole games against gunicorn (the deployed configuration),
PostgreSQL on loopback and the rate limits counted in Redis, for a bounded time; prints requests per second,
p50 and p99 per endpoint, and errors (which must be 0). With --baseline-ref, another commit is loaded the same
way in the same run, and the requests per second of this checkout are compared with its.

    .venv/bin/python bench/load.py [--clients 8] [--seconds 60] [--web-workers 4] [--baseline-ref 897728a]
        [--rounds 1]
        [--database-url postgres://postgres@127.0.0.1:5432/postgres] [--database-name kingscorner_load]
        [--broker-url redis://127.0.0.1:6379/10] [--cache-url redis://127.0.0.1:6379/11]

It starts the service on its own database (`<database-name>`, and `<database-name>_baseline` for the
baseline, made afresh) and the two Redis databases given (emptied first; the checkouts' counters do not
meet, for each counts its own players), runs the clients as separate processes, stops everything and prints
the tables. Every client registers, then loops: start a game against three normal opponents, read it now and
then, and play it to the end one move per request from its `legal_moves` (a play when there is one, else
end_turn), with the daily deal and its leaderboard read between games. Any response other than the expected
status counts as an error. With a baseline, the two are loaded in turn, this checkout, the baseline, the
baseline, this checkout (`--seconds` each, never both at once; `--rounds` times), so that a drift in the
machine's load falls on both alike; each table adds up its turns. On a machine shared with other work the
requests per second swing by a third from one turn to the next; the CPU seconds a request costs the web
server and PostgreSQL (sampled from /proc, bench/costs.py) swing far less, and are compared too. The rate
limits are raised to 1,000,000 a minute so that the clients are never refused.
"""

import argparse
import http.client
import json
import multiprocessing
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.checkouts import checkouts  # noqa: E402
from bench.costs import CpuSampler, database_counts, pause_for_statistics  # noqa: E402
from tests.support.stack import Stack, database_create  # noqa: E402

Sample = tuple[str, int, float]  # endpoint, status, seconds


class Client:
    def __init__(self, port: int) -> None:
        self.port = port
        self.token = ""
        self.samples: list[Sample] = []
        self.errors: list[str] = []

    def call(self, label: str, method: str, path: str, body: Any = None, expect: int = 200) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        start = time.perf_counter()
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            response = conn.getresponse()
            data = response.read()
            status = response.status
        except OSError as error:
            self.samples.append((label, 0, time.perf_counter() - start))
            self.errors.append(f"{label}: {error}")
            return None
        finally:
            conn.close()
        self.samples.append((label, status, time.perf_counter() - start))
        if status != expect:
            self.errors.append(f"{label}: {status} {data[:200]!r}")
            return None
        return json.loads(data) if data else None


def client_run(port: int, seconds: float, number: int) -> tuple[list[Sample], list[str], int]:
    rng = random.Random(number)
    client = Client(port)
    player = client.call("POST /players", "POST", "/api/v1/players", {"name": f"load {number}"}, expect=201)
    if player is None:
        return client.samples, client.errors, 0
    client.token = player["token"]
    deadline = time.monotonic() + seconds
    games = 0
    while time.monotonic() < deadline:
        daily = client.call("GET /daily", "GET", "/api/v1/daily")
        if daily is not None:
            client.call("GET /daily/{date}/leaderboard", "GET", f"/api/v1/daily/{daily['date']}/leaderboard")
        view = client.call(
            "POST /games", "POST", "/api/v1/games", {"level": "normal", "target_score": None}, expect=201
        )
        while view is not None and view["status"] == "playing" and time.monotonic() < deadline:
            if rng.random() < 0.1:
                view = client.call("GET /games/{id}", "GET", f"/api/v1/games/{view['id']}")
                if view is None:
                    break
            move = next((m for m in view["legal_moves"] if m["type"] == "play"), {"type": "end_turn"})
            label = f"POST /games/{{id}}/moves ({move['type']})"
            body = {"moves": [move], "expected_version": view["version"]}
            view = client.call(label, "POST", f"/api/v1/games/{view['id']}/moves", body)
        if view is not None and view["status"] != "playing":
            games += 1
    return client.samples, client.errors, games


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def report(samples: list[Sample], errors: list[str], games: int, seconds: float, clients: int) -> str:
    by_endpoint: dict[str, list[float]] = defaultdict(list)
    for label, _, elapsed in samples:
        by_endpoint[label].append(elapsed)
    lines = [
        f"{clients} clients for {seconds:.1f} s: {len(samples)} requests, "
        f"{len(samples) / seconds:.1f} requests/s, {games} games finished, {len(errors)} errors",
        f"{'endpoint':<36} {'n':>7} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}",
    ]
    for label in sorted(by_endpoint):
        values = by_endpoint[label]
        lines.append(
            f"{label:<36} {len(values):>7} {len(values) / seconds:>8.1f} "
            f"{percentile(values, 0.5) * 1000:>8.2f} {percentile(values, 0.99) * 1000:>8.2f}"
        )
    lines.extend(f"error: {error}" for error in errors[:20])
    return "\n".join(lines)


Run = tuple[list[Sample], list[str], int, float, dict[str, float]]


def load_run(stack: Stack, server_url: str, database: str, clients: int, seconds: float) -> Run:
    """The samples, errors and finished games of `clients` clients for `seconds`, the seconds it took, and the
    CPU seconds of the web server and of the database's backends meanwhile."""
    sampler = CpuSampler(stack.processes["web"].pid, server_url, database)
    sampler.start()
    started = time.monotonic()
    with multiprocessing.Pool(clients) as pool:
        results = pool.starmap(client_run, [(stack.port, seconds, number) for number in range(clients)])
    elapsed = time.monotonic() - started
    cpu = sampler.stop()
    samples = [sample for result in results for sample in result[0]]
    errors = [error for result in results for error in result[1]]
    return samples, errors, sum(result[2] for result in results), elapsed, cpu


def costs(samples: list[Sample], cpu: dict[str, float], before: dict[str, int], after: dict[str, int]) -> str:
    requests = len(samples)
    moves = sum(1 for label, _, _ in samples if label.startswith("POST /games/{id}/moves"))
    both = cpu["web"] + cpu["database"]
    lines = [
        f"CPU: web {cpu['web']:.1f} s ({cpu['web'] / requests * 1000:.2f} ms a request), PostgreSQL backends "
        f"{cpu['database']:.1f} s ({cpu['database'] / requests * 1000:.2f} ms a request): "
        f"{requests / cpu['web']:.0f} requests per web CPU-second, "
        f"{requests / both:.0f} per CPU-second of both",
        f"database, per request of the mix ({requests}) and per move request ({moves}):",
    ]
    for name in sorted(after):
        delta = after[name] - before.get(name, 0)
        if delta:
            lines.append(f"  {name:<34} {delta:>8} {delta / requests:>7.2f} {delta / moves:>7.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60, help="how long the clients play (bounded)")
    parser.add_argument("--web-workers", type=int, default=4, help="gunicorn workers")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    parser.add_argument("--database-name", default="kingscorner_load")
    parser.add_argument("--broker-url", default="redis://127.0.0.1:6379/10")
    parser.add_argument("--cache-url", default="redis://127.0.0.1:6379/11")
    parser.add_argument("--baseline-ref", help="a commit to load beside this checkout, e.g. 897728a")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="turns of --seconds: this one (with a baseline: this, baseline, baseline, this) this many times",
    )
    options = parser.parse_args(argv)
    if not options.database_url.startswith("postgres"):
        parser.error("--database-url must name a PostgreSQL server")

    for url in (options.broker_url, options.cache_url):
        redis.Redis.from_url(url).flushdb()
    with checkouts(options.baseline_ref) as sides:
        stacks: list[Stack] = []
        runs: list[list[Run]] = [[] for _ in sides]
        names: list[str] = []
        urls: list[str] = []
        try:
            for checkout in sides:
                name = options.database_name + ("" if checkout.slug == "this" else f"_{checkout.slug}")
                stack = Stack(
                    database_url=database_create(options.database_url, name, fresh=True),
                    broker_url=options.broker_url,
                    cache_url=options.cache_url,
                    root=checkout.root,
                )
                stacks.append(stack)
                names.append(name)
                urls.append(stack.env["DATABASE_URL"])
                stack.manage("migrate", "--noinput", "--verbosity", "0")
                stack.start_web(workers=options.web_workers)
            pause_for_statistics()
            before = [
                database_counts(options.database_url, url, name)
                for url, name in zip(urls, names, strict=True)
            ]
            # This, the baseline, the baseline, this: each gets the machine's early and late load alike.
            order = [0] * options.rounds if len(sides) == 1 else [0, 1, 1, 0] * options.rounds
            for side in order:
                runs[side].append(
                    load_run(
                        stacks[side], options.database_url, names[side], options.clients, options.seconds
                    )
                )
        finally:
            for stack in stacks:
                stack.close()
        # The backends have exited with the web servers, and reported their statistics.
        pause_for_statistics()
        after = [
            database_counts(options.database_url, url, name) for url, name in zip(urls, names, strict=True)
        ]
    rates: list[float] = []
    cpu_costs: list[float] = []
    failed = False
    for index, (checkout, side_runs) in enumerate(zip(sides, runs, strict=True)):
        samples = [sample for run in side_runs for sample in run[0]]
        errors = [error for run in side_runs for error in run[1]]
        games = sum(run[2] for run in side_runs)
        elapsed = sum(run[3] for run in side_runs)
        failed = failed or bool(errors)
        rates.append(len(samples) / elapsed)
        turns = ", ".join(f"{len(run[0]) / run[3]:.1f}" for run in side_runs)
        print(f"{checkout.label} (requests/s of each turn: {turns}):")
        print(report(samples, errors, games, elapsed, options.clients))
        cpu = {kind: sum(run[4][kind] for run in side_runs) for kind in ("web", "database")}
        print(costs(samples, cpu, before[index], after[index]))
        cpu_costs.append((cpu["web"] + cpu["database"]) / len(samples))
        print()
    if len(rates) > 1:
        print(
            f"requests/s, {sides[0].label} / {sides[1].label}: {rates[0] / rates[1]:.2f} "
            f"({rates[0]:.1f} / {rates[1]:.1f})"
        )
        # What the machine's other load changes least: the CPU a request costs.
        print(
            f"requests per CPU-second of web and PostgreSQL, {sides[0].label} / {sides[1].label}: "
            f"{cpu_costs[1] / cpu_costs[0]:.2f} ({1 / cpu_costs[0]:.0f} / {1 / cpu_costs[1]:.0f}; goal ≥ 1.3)"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
