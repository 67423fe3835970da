"""Times the close of a day's unfinished ranked attempts at 100,000 and 1,000,000 of them, and the API while
the close runs.

For each size it creates a scratch PostgreSQL database beside the one DATABASE_URL names, migrates it, makes
a past day's deal and one open ranked attempt at it through the services, and copies that attempt's game
with COPY, each copy with its own player and ranked attempt. It then serves the API with gunicorn on that
database and keeps three clients busy, one request at a time each: `GET daily`, `GET daily/{day}/leaderboard`
and `end_turn` in an ordinary game of their own (a new one whenever a hand ends). It measures them for a
while before the close, runs `manage.py daily_close --json` in a process of its own, measures them while it
runs, and prints the close's total time, the time per batch and each request's p50 and p99 before and
during. The scratch database is dropped at the end.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/daily_close_bench.py
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kingscorner.settings")

from tests.support.stack import Stack, database_create  # noqa: E402

BENCH_DAY = date(2026, 6, 1)
COPY_CHUNK = 50_000


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def load(database_url: str, count: int) -> None:
    """The deal of BENCH_DAY and `count` open ranked attempts at it, each with its own player and game."""
    os.environ["DATABASE_URL"] = database_url
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from daily import services
    from games.models import Player

    call_command("migrate", verbosity=0)
    deal = services.daily_deal_get_or_create(day=BENCH_DAY)
    template_player = Player.objects.create(name="template", token_hash="f" * 64)
    template = services.daily_game_create(player=template_player, deal=deal)
    raw = connection.connection
    with raw.cursor() as cursor:
        cursor.execute("SELECT * FROM games_game WHERE id = %s", (template.id,))
        columns = [column.name for column in cursor.description]
        template_row = dict(zip(columns, cursor.fetchone(), strict=True))
        cursor.execute("SELECT * FROM games_player WHERE id = %s", (template_player.id,))
        player_columns = [column.name for column in cursor.description]
        player_row = dict(zip(player_columns, cursor.fetchone(), strict=True))
    # Django reads json columns as text, so the copies carry the template's JSON as it is stored.
    assert all(isinstance(template_row[column], str) for column in ("state", "rules", "opponents"))
    started_at = datetime.combine(BENCH_DAY, datetime.min.time(), tzinfo=UTC) + timedelta(hours=9)

    def copy(table: str, names: list[str], rows: Iterator[tuple[Any, ...]]) -> None:
        statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, names))
        )
        with raw.cursor() as cursor, cursor.copy(statement) as writer:
            for row in rows:
                writer.write_row(row)

    for first in range(0, count, COPY_CHUNK):
        size = min(COPY_CHUNK, count - first)
        players = [uuid.uuid4() for _ in range(size)]
        games = [uuid.uuid4() for _ in range(size)]
        copy(
            "games_player",
            player_columns,
            (
                tuple(
                    {
                        **player_row,
                        "id": player,
                        "name": f"p{first + i}",
                        "token_hash": f"{first + i:064x}",
                    }.values()
                )
                for i, player in enumerate(players)
            ),
        )
        copy(
            "games_game",
            columns,
            (
                tuple({**template_row, "id": game, "player_id": player}.values())
                for player, game in zip(players, games, strict=True)
            ),
        )
        copy(
            "daily_attempt",
            ["public_id", "player_id", "deal_id", "game_id", "ranked", "started_at"],
            (
                (uuid.uuid4(), player, deal.id, game, True, started_at)
                for player, game in zip(players, games, strict=True)
            ),
        )
        print(f"\r  loaded {first + size:,} of {count:,}", end="", flush=True)
    with raw.cursor() as cursor:
        cursor.execute("ANALYZE")
    print()
    connection.close()


class Client(threading.Thread):
    """Sends one kind of request, one at a time, and keeps each latency with the time it was sent."""

    def __init__(self, base_url: str, kind: str, token: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.base_url, self.kind, self.token, self.stop = base_url, kind, token, stop
        self.samples: list[tuple[float, float]] = []
        self.errors = 0
        self.game: dict[str, Any] | None = None

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.base_url}/api/v1/{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return dict(json.loads(response.read()))

    def _request(self) -> None:
        if self.kind == "GET daily":
            self._call("GET", "daily")
        elif self.kind == "GET leaderboard":
            self._call("GET", f"daily/{BENCH_DAY.isoformat()}/leaderboard")
        else:
            assert self.game is not None, "run() starts a game before an end_turn"
            self.game = self._call(
                "POST", f"games/{self.game['id']}/moves", {"moves": [{"type": "end_turn"}]}
            )

    def run(self) -> None:
        while not self.stop.is_set():
            if self.kind == "end_turn" and (self.game is None or self.game["status"] != "playing"):
                self.game = self._call("POST", "games", {})
                continue
            started = time.perf_counter()
            try:
                self._request()
            except OSError:
                self.errors += 1
                continue
            self.samples.append((started, (time.perf_counter() - started) * 1000))


def run(server_url: str, redis_url: str, count: int, baseline_seconds: float) -> dict[str, Any]:
    name = f"kingscorner_close_bench_{os.getpid()}"
    database_url = database_create(server_url, name, fresh=True)
    loader = subprocess.run(
        [sys.executable, __file__, "--load-only", str(count), "--database", database_url],
        cwd=ROOT,
        check=True,
    )
    assert loader.returncode == 0
    stack = Stack(database_url=database_url, broker_url=redis_url, cache_url=redis_url)
    try:
        stack.start_web(workers=2)
        with urllib.request.urlopen(
            urllib.request.Request(
                f"{stack.base_url}/api/v1/players",
                data=b'{"name": "bench"}',
                headers={"Content-Type": "application/json"},
            )
        ) as response:
            token = json.loads(response.read())["token"]
        stop = threading.Event()
        clients = [
            Client(stack.base_url, kind, token, stop) for kind in ("GET daily", "GET leaderboard", "end_turn")
        ]
        for client in clients:
            client.start()
        time.sleep(baseline_seconds)
        close_started = time.perf_counter()
        closer = subprocess.run(
            [sys.executable, "manage.py", "daily_close", "--date", BENCH_DAY.isoformat(), "--json"],
            cwd=ROOT,
            env=stack.env,
            capture_output=True,
            text=True,
        )
        if closer.returncode != 0:
            sys.exit(f"daily_close failed: {closer.stderr}")
        close_ended = time.perf_counter()
        stop.set()
        for client in clients:
            client.join()
        report = json.loads(closer.stdout)[BENCH_DAY.isoformat()]
        batches = [batch["seconds"] * 1000 for batch in report["batches"]]
        requests: dict[str, Any] = {}
        for client in clients:
            before = [ms for sent, ms in client.samples if sent < close_started]
            during = [ms for sent, ms in client.samples if close_started <= sent < close_ended]
            requests[client.kind] = {
                "before": (statistics.median(before), _percentile(before, 0.99), len(before)),
                "during": (statistics.median(during), _percentile(during, 0.99), len(during)),
                "errors": client.errors,
            }
        return {
            "closed": report["closed"],
            "seconds": close_ended - close_started,
            "batch_ms": (statistics.median(batches), _percentile(batches, 0.99), max(batches), len(batches)),
            "requests": requests,
        }
    finally:
        stack.close()
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100000,1000000", help="unfinished ranked attempts to close")
    parser.add_argument("--baseline-seconds", type=float, default=10, help="measuring before the close")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/12", help="the cache of the server")
    parser.add_argument("--load-only", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--database", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.load_only is not None:
        load(options.database, options.load_only)
        return
    server_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    if not server_url.startswith(("postgres://", "postgresql://")):
        sys.exit("DATABASE_URL must name a PostgreSQL server")
    for size in (int(size) for size in options.sizes.split(",")):
        print(f"{size:,} unfinished ranked attempts")
        result = run(server_url, options.redis_url, size, options.baseline_seconds)
        median, p99, worst, batches = result["batch_ms"]
        print(
            f"  closed {result['closed']:,} in {result['seconds']:.1f} s "
            f"({result['closed'] / result['seconds']:,.0f} a second), {batches} batches: "
            f"p50 {median:.0f} ms, p99 {p99:.0f} ms, worst {worst:.0f} ms"
        )
        print(f"  {'request':<18}{'before p50/p99 ms (n)':>26}{'during p50/p99 ms (n)':>26}{'errors':>8}")
        for kind, figures in result["requests"].items():
            before, during = figures["before"], figures["during"]
            print(
                f"  {kind:<18}{f'{before[0]:.1f} / {before[1]:.1f} ({before[2]})':>26}"
                f"{f'{during[0]:.1f} / {during[1]:.1f} ({during[2]})':>26}{figures['errors']:>8}"
            )


if __name__ == "__main__":
    main()
