"""Event streams at scale: many streams open on uvicorn over many tables of four people, on PostgreSQL and
Redis as deployed (gunicorn for the API, uvicorn for the streams, wake-ups on Redis publish/subscribe).

    .venv/bin/python bench/streams.py [--streams 1000] [--tables 250] [--moves 300] [--requests 200]
        [--database-url postgres://postgres@127.0.0.1:5432/postgres] [--redis-url redis://127.0.0.1:6379/15]

It prints:
- the delay from a move's commit to its last event reaching every seat of the table (p50, p99, max): moves
  made one after another at random tables by this process through the move service, the commit's time
  taken by an on-commit callback registered before the service's own (which publishes the wake-up), and
  each arrival's time taken by a separate reader process that holds every stream open (CLOCK_MONOTONIC is
  one clock for both);
- the memory of the uvicorn process per open stream: its resident set with the streams open, less before
  they were opened, divided by their number;
- the move request's p50 and p99 through gunicorn, without streams open, with them, and without them again.

It creates the database `kingscorner_bench_streams` on that server (anew each run) and uses the Redis
database of --redis-url for the cache and the wake-ups, which it empties first.
"""

import argparse
import asyncio
import multiprocessing
import os
import random
import statistics
import sys
import time
from functools import partial
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis  # noqa: E402

from tests.support.stack import Stack, call, database_create  # noqa: E402

BENCH_DATABASE = "kingscorner_bench_streams"
SEATS = 4


# --- the reader process: every stream open, each event's arrival timed --------------------------------------


async def _read_stream(
    port: int, path: str, token: str, after: int, key: tuple[str, int], out: Connection, opened: list[int]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
            f"Authorization: Bearer {token}\r\nLast-Event-ID: {after}\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"a stream was refused: {head[:200]!r}")
    opened[0] += 1
    buffer = b""
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.strip(), 16)
        if size == 0:
            return
        chunk = await reader.readexactly(size + 2)
        buffer += chunk[:-2]
        while b"\n\n" in buffer:
            message, buffer = buffer.split(b"\n\n", 1)
            for line in message.split(b"\n"):
                if line.startswith(b"id: "):
                    out.send((key[0], key[1], int(line[4:]), time.monotonic()))


def _reader(port: int, streams: list[tuple[str, str, int, int]], out: Connection) -> None:
    """Opens every stream (game, token, seat, last event id) and sends (game, seat, seq, arrival) for each
    event, and ("opened", count) once all are open."""

    async def main() -> None:
        opened = [0]
        tasks = []
        for game_id, token, seat, after in streams:
            path = f"/api/v1/games/{game_id}/stream"
            tasks.append(
                asyncio.create_task(_read_stream(port, path, token, after, (game_id, seat), out, opened))
            )
            if len(tasks) % 50 == 0:
                await asyncio.sleep(0.05)
        while opened[0] < len(streams):
            for task in tasks:
                if task.done() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
            await asyncio.sleep(0.05)
        out.send(("opened", len(streams), 0, 0.0))
        await asyncio.gather(*tasks)

    asyncio.run(main())


# --- measuring ----------------------------------------------------------------------------------------------


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def rss_kib(pid: int) -> int:
    """The resident set of a process and its children, in KiB."""
    total = 0
    pids = {pid}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                pids.add(int(entry.name))
    for each in pids:
        for line in Path(f"/proc/{each}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total


class Tables:
    """The tables of four people, their players and tokens, and the view of whoever is to move."""

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.tables: list[dict[str, Any]] = []
        for index in range(count):
            tokens = []
            for seat in range(SEATS):
                status, body, _ = call(port, "POST", "/api/v1/players", {"name": f"P{index}s{seat}"})
                assert status == 201, body
                tokens.append(body["token"])
            seats = [{"kind": "person"}] * SEATS
            status, table, _ = call(
                port, "POST", "/api/v1/games", {"seats": seats, "target_score": 500}, tokens[0]
            )
            assert status == 201, table
            for token in tokens[1:]:
                status, body, _ = call(
                    port, "POST", f"/api/v1/invitations/{table['invitation']['code']}", None, token
                )
                assert status == 200, body
            self.tables.append({"id": table["id"], "tokens": tokens})

    def view(self, table: dict[str, Any], seat: int = 0) -> dict[str, Any]:
        status, view, _ = call(self.port, "GET", f"/api/v1/games/{table['id']}", None, table["tokens"][seat])
        assert status == 200, view
        return dict(view)

    def mover(self, table: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The seat to move and its view, dealing a new hand first if one is over."""
        view = self.view(table)
        if view["status"] == "hand_over":
            status, view, _ = call(
                self.port,
                "POST",
                f"/api/v1/games/{table['id']}/hands",
                {"expected_version": view["version"]},
                table["tokens"][0],
            )
            assert status == 200, view
        seat = view["current_seat"]
        return seat, self.view(table, seat)


def _mark(times: list[float]) -> None:
    times.append(time.monotonic())


def _one_move(view: dict[str, Any]) -> list[dict[str, Any]]:
    plays = [move for move in view["legal_moves"] if move["type"] != "end_turn"]
    return [plays[0] if plays else {"type": "end_turn"}]


def move_requests(tables: Tables, count: int) -> list[float]:
    """Seconds per move request through gunicorn (the view read before it is not timed)."""
    times = []
    for _ in range(count):
        table = random.choice(tables.tables)
        seat, view = tables.mover(table)
        body = {"moves": _one_move(view), "expected_version": view["version"]}
        status, answer, seconds = call(
            tables.port, "POST", f"/api/v1/games/{table['id']}/moves", body, table["tokens"][seat]
        )
        assert status == 200, answer
        times.append(seconds)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--tables", type=int, default=250)
    parser.add_argument("--moves", type=int, default=300, help="moves whose delay to every seat is timed")
    parser.add_argument("--requests", type=int, default=200, help="move requests timed in each phase")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--web-workers", type=int, default=2)
    args = parser.parse_args()
    per_table = args.streams // args.tables
    assert per_table <= SEATS and per_table * args.tables == args.streams, "streams: up to 4 a table"

    database_url = database_create(args.database_url, BENCH_DATABASE, fresh=True)
    redis.Redis.from_url(args.redis_url).flushdb()
    stack = Stack(
        database_url=database_url,
        broker_url="memory://",
        cache_url=args.redis_url,
        extra_env={"CELERY_TASK_ALWAYS_EAGER": "true"},
    )
    os.environ.update(
        {key: stack.env[key] for key in ("DATABASE_URL", "REDIS_URL", "CONN_MAX_AGE", "SECRET_KEY")}
    )
    os.environ["DJANGO_SETTINGS_MODULE"] = "kingscorner.settings"
    reader: multiprocessing.Process | None = None
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=args.web_workers)
        stack.start_stream(workers=1)
        print(
            f"{args.tables} tables of {SEATS} people, {args.streams} streams; load {os.getloadavg()[0]:.1f}"
        )
        tables = Tables(stack.port, args.tables)
        for table in tables.tables:
            tables.view(table)
        call(stack.stream_port, "GET", "/api/v1/health")
        without = move_requests(tables, args.requests)

        rss_before = rss_kib(stack.processes["stream"].pid)
        streams = []
        for table in tables.tables:
            status, page, _ = call(
                stack.port, "GET", f"/api/v1/games/{table['id']}/events?after=0", None, table["tokens"][0]
            )
            last = page["more_after"]
            for seat in range(per_table):
                streams.append((table["id"], table["tokens"][seat], seat, last))
        receiving, sending = multiprocessing.Pipe(duplex=False)
        reader = multiprocessing.Process(
            target=_reader, args=(stack.stream_port, streams, sending), daemon=True
        )
        reader.start()
        while True:
            message = receiving.recv()
            if message[0] == "opened":
                break
        time.sleep(2)
        rss_open = rss_kib(stack.processes["stream"].pid)
        per_stream = (rss_open - rss_before) / args.streams

        # Commit-to-every-seat delay, moves in this process through the service.
        import django

        django.setup()
        from django.db import transaction

        from games import services
        from games.models import Game, GameSeat

        players = {
            (str(row.game_id), row.seat): row.player
            for row in GameSeat.objects.select_related("player").filter(player__isnull=False)
            if row.player is not None
        }
        arrivals: dict[tuple[str, int], dict[int, float]] = {}

        def drain(timeout: float) -> None:
            while receiving.poll(timeout):
                game_id, seat, seq, at = receiving.recv()
                arrivals.setdefault((game_id, seq), {})[seat] = at
                timeout = 0

        delays = []
        for _ in range(args.moves):
            table = random.choice(tables.tables)
            seat, view = tables.mover(table)
            player = players[(table["id"], seat)]
            committed: list[float] = []
            with transaction.atomic():
                transaction.on_commit(partial(_mark, committed))
                services.game_moves_apply(
                    game_id=table["id"],
                    player=player,
                    moves=_one_move(view),
                    expected_version=view["version"],
                )
            last_seq = Game.objects.get(id=table["id"]).event_seq
            deadline = time.monotonic() + 30
            while len(arrivals.get((table["id"], last_seq), {})) < per_table and time.monotonic() < deadline:
                drain(0.05)
            seen = arrivals.get((table["id"], last_seq), {})
            if len(seen) < per_table:
                raise SystemExit(f"a move's last event did not reach every seat within 30 s: {seen}")
            delays.append(max(seen.values()) - committed[0])
            drain(0)

        with_streams = move_requests(tables, args.requests)
        receiving.close()
        reader.terminate()
        reader.join()
        reader = None
        time.sleep(2)
        without_again = move_requests(tables, args.requests)

        ms = [delay * 1000 for delay in delays]
        print(
            f"commit to every seat ({args.moves} moves, {per_table} seats each): "
            f"p50 {percentile(ms, 0.5):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, max {max(ms):.1f} ms"
        )
        print(
            f"uvicorn RSS: {rss_before / 1024:.1f} MiB before, {rss_open / 1024:.1f} MiB with {args.streams} "
            f"streams open: {per_stream:.1f} KiB a stream"
        )
        for name, times in (
            ("without streams", without),
            (f"with {args.streams} streams open", with_streams),
            ("without streams again", without_again),
        ):
            values = [seconds * 1000 for seconds in times]
            print(
                f"move request {name}: p50 {statistics.median(values):.1f} ms, "
                f"p99 {percentile(values, 0.99):.1f} ms"
            )
        print(f"load {os.getloadavg()[0]:.1f}")
    finally:
        if reader is not None:
            reader.terminate()
        stack.close()


if __name__ == "__main__":
    main()
