"""Times the daily leaderboard's reads and writes at 1,000 and at 1,000,000 submissions for one day.

It creates a scratch PostgreSQL database beside the one DATABASE_URL names, migrates it, loads the
submissions with COPY (each with its player, game and ranked attempt, as the API would have made them),
then times, through the app's own selectors and services: the first leaderboard page, a page from a cursor
half-way down, a /leaderboard/me lookup and the recording of a new submission. The scratch database is
dropped at the end.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/daily_bench.py
"""

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kingscorner.settings")

BENCH_DAY = date(2026, 6, 1)
PAGE_SIZE = 50


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _timed(action: Callable[[], object], *, runs: int, warmup: int = 3) -> tuple[float, float]:
    """Median and slowest run of `action`, in milliseconds."""
    for _ in range(warmup):
        action()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), max(times)


class Loader:
    """Appends ranked submissions to one deal with COPY, in the shape the API writes them."""

    def __init__(self, deal: Any, *, seed: int) -> None:
        from django.db import connection

        from games.models import Game, Player

        self.deal = deal
        self.random = random.Random(seed)
        self.loaded = 0
        connection.ensure_connection()
        self.raw = connection.connection
        # The columns and values of a player and a game as Django would insert them; rows vary the keys.
        player = Player(name="bench", token_hash="0" * 64)
        game = Game(player=player, opponents=deal.opponents, rules=deal.rules, seed=deal.seed, state={})
        self.player_row = self._row(player)
        self.game_row = self._row(game)
        self.day_start = datetime.combine(deal.date, datetime.min.time(), tzinfo=UTC)

    @staticmethod
    def _row(instance: Any) -> dict[str, Any]:
        from django.db import connection

        return {
            field.column: field.get_db_prep_save(field.pre_save(instance, add=True), connection)
            for field in instance._meta.concrete_fields
        }

    def _result(self) -> int:
        # About a third go out first and score what the others hold; the rest lose what they hold.
        if self.random.random() < 0.35:
            return self.random.randint(4, 45) + 10 * self.random.choice((0, 0, 0, 1, 1, 2))
        return -(self.random.randint(1, 12) + 10 * self.random.choice((0, 0, 0, 0, 1)))

    def _copy(self, table: str, columns: list[str], rows: Iterator[tuple[Any, ...]]) -> None:
        statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
        )
        with self.raw.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)

    def _next_id(self, table: str) -> int:
        with self.raw.cursor() as cursor:
            cursor.execute(sql.SQL("SELECT coalesce(max(id), 0) + 1 FROM {}").format(sql.Identifier(table)))
            return int(cursor.fetchone()[0])

    def load(self, count: int) -> None:
        first = self.loaded
        players = [uuid.UUID(int=self.random.getrandbits(128), version=4) for _ in range(count)]
        games = [uuid.UUID(int=self.random.getrandbits(128), version=4) for _ in range(count)]
        finished = [self.day_start + timedelta(seconds=self.random.randrange(86400)) for _ in range(count)]

        def players_rows() -> Iterator[tuple[Any, ...]]:
            for index, player_id in enumerate(players, start=first):
                row = {**self.player_row, "id": player_id, "name": f"p{index}", "token_hash": f"{index:064x}"}
                yield tuple(row.values())

        def games_rows() -> Iterator[tuple[Any, ...]]:
            for player_id, game_id in zip(players, games, strict=True):
                yield tuple({**self.game_row, "id": game_id, "player_id": player_id}.values())

        attempt_base = self._next_id("daily_attempt")
        submission_base = self._next_id("daily_submission")
        self._copy("games_player", list(self.player_row), players_rows())
        self._copy("games_game", list(self.game_row), games_rows())
        self._copy(
            "daily_attempt",
            ["id", "public_id", "player_id", "deal_id", "game_id", "ranked", "started_at"],
            (
                (
                    attempt_base + i,
                    uuid.UUID(int=self.random.getrandbits(128), version=4),
                    players[i],
                    self.deal.id,
                    games[i],
                    True,
                    finished[i] - timedelta(minutes=5),
                )
                for i in range(count)
            ),
        )
        self._copy(
            "daily_submission",
            [
                "id",
                "public_id",
                "attempt_id",
                "deal_id",
                "player_id",
                "result",
                "turns",
                "finished_at",
                "closed",
            ],
            (
                (
                    submission_base + i,
                    uuid.UUID(int=self.random.getrandbits(128), version=4),
                    attempt_base + i,
                    self.deal.id,
                    players[i],
                    self._result(),
                    self.random.randint(3, 25),
                    finished[i],
                    False,
                )
                for i in range(count)
            ),
        )
        with self.raw.cursor() as cursor:
            for table in ("daily_attempt", "daily_submission"):
                cursor.execute(
                    sql.SQL(
                        "SELECT setval(pg_get_serial_sequence({}, 'id'), (SELECT max(id) FROM {}))"
                    ).format(sql.Literal(table), sql.Identifier(table))
                )
            # The bulk load bypasses the service, so the counts are rebuilt from the submissions once.
            cursor.execute(
                "INSERT INTO daily_resultcount (deal_id, result, count) "
                "SELECT deal_id, result, count(*) FROM daily_submission WHERE deal_id = %s GROUP BY 1, 2 "
                "ON CONFLICT (deal_id, result) DO UPDATE SET count = EXCLUDED.count",
                (self.deal.id,),
            )
            cursor.execute("ANALYZE")
        self.loaded += count


def measure(deal: Any, *, runs: int, explain: bool) -> dict[str, tuple[float, float]]:
    from django.db import transaction

    from daily import services
    from daily.models import Attempt, Submission
    from daily.selectors.leaderboard import (
        LeaderboardCursor,
        leaderboard_me,
        leaderboard_page,
        leaderboard_querysets,
    )
    from games.models import Game, Player

    count = Submission.objects.filter(deal=deal).count()
    board_order = ("-result", "closed", "turns", "finished_at", "public_id")
    middle = Submission.objects.filter(deal=deal).order_by(*board_order)[count // 2]
    cursor = LeaderboardCursor(
        middle.result, middle.closed, middle.turns, middle.finished_at, middle.public_id
    ).encode()
    page = leaderboard_page(deal=deal, cursor=cursor, limit=PAGE_SIZE)
    assert len(page["entries"]) == PAGE_SIZE and page["count"] == count

    if explain:
        after = LeaderboardCursor.decode(cursor)
        for queryset in leaderboard_querysets(deal=deal, cursor=after):
            print(queryset[: PAGE_SIZE + 1].explain(analyze=True, buffers=True), end="\n\n")

    fresh: list[Attempt] = []

    def new_attempt() -> Attempt:
        player = Player.objects.create(name="new", token_hash=uuid.uuid4().hex * 2)
        game = Game.objects.create(player=player, opponents=[], rules={}, seed="", state={})
        return Attempt.objects.create(
            player=player, deal=deal, game=game, ranked=True, started_at=datetime.now(UTC)
        )

    def submit() -> None:
        attempt = fresh.pop()
        with transaction.atomic():
            services.submission_record(attempt=attempt, result=7, turns=9, finished_at=datetime.now(UTC))

    fresh.extend(new_attempt() for _ in range(runs + 3))
    return {
        "first page": _timed(lambda: leaderboard_page(deal=deal, cursor=None, limit=PAGE_SIZE), runs=runs),
        "page from a mid cursor": _timed(
            lambda: leaderboard_page(deal=deal, cursor=cursor, limit=PAGE_SIZE), runs=runs
        ),
        "/me lookup": _timed(lambda: leaderboard_me(deal=deal, player=middle.player), runs=runs),
        "new submission": _timed(submit, runs=runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,1000000", help="submission counts to time at, ascending")
    parser.add_argument(
        "--runs", type=int, default=25, help="timed runs of each operation (the median is shown)"
    )
    parser.add_argument("--explain", action="store_true", help="print the plan of the cursor page's query")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]

    base_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    if not base_url.startswith(("postgres://", "postgresql://")):
        sys.exit("DATABASE_URL must name a PostgreSQL server")
    scratch = f"kingscorner_bench_{os.getpid()}"
    with psycopg.connect(base_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(scratch)))
    os.environ["DATABASE_URL"] = _with_database(base_url, scratch)
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        from daily import services

        call_command("migrate", verbosity=0)
        deal = services.daily_deal_get_or_create(day=BENCH_DAY)
        loader = Loader(deal, seed=20260601)
        print(f"PostgreSQL {connection.cursor().connection.info.server_version}, scratch database {scratch}")
        print(f"{'submissions':>12}  {'operation':<24}{'median ms':>10}{'max ms':>9}")
        for size in sizes:
            start = time.perf_counter()
            loader.load(size - loader.loaded)
            load_seconds = time.perf_counter() - start
            for name, (median, slowest) in measure(deal, runs=args.runs, explain=args.explain).items():
                print(f"{size:>12,}  {name:<24}{median:>10.2f}{slowest:>9.2f}")
            print(f"{'':>12}  (loaded in {load_seconds:.1f} s)")
        connection.close()
    finally:
        if not args.keep:
            with psycopg.connect(base_url, autocommit=True) as admin:
                admin.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(scratch))
                )


if __name__ == "__main__":
    main()
