"""Event streams at scale: thousands of streams open on uvicorn over tables of four people, on PostgreSQL and
Redis as deployed (gunicorn for the API, uvicorn for the streams, wake-ups on Redis publish/subscribe, nginx
in front from deploy/nginx.conf.template).

    .venv/bin/python bench/streams.py [--streams 2000] [--person-streams 500] [--burst 500] [--moves 200]
        [--requests 100] [--database-url postgres://postgres@127.0.0.1:5432/postgres]
        [--redis-url redis://127.0.0.1:6379/15]

It prints a table of figures, each against its goal where it has one:
- 500 opens at once on one uvicorn process, half of them game streams and half person streams (every
  connection made first, then every request written at once): the time from a request's write to its first
  byte of the stream (p50, p99, max);
- with 2,000 game streams (one a seat) and 500 person streams open on that process: its memory per open
  stream (its resident set with the streams open, less before they were opened, divided by their number:
  the first time the process holds them, and again once it has, its allocator's arenas grown already),
  its file descriptors (/proc/<pid>/fd) and its Redis connections (`CLIENT LIST`, by the name
  kingscorner:<pid> each of its connections gives itself);
- the delay from a move's commit to its last event reaching every seat of the table (p50, p99, max), with
  those streams open straight to uvicorn, and again through nginx: moves made one after another at random
  tables by this process through the move service, the commit's time taken by an on-commit callback registered
  before the service's own (which publishes the wake-up), and each arrival's time taken by a separate reader
  process that holds every stream open (CLOCK_MONOTONIC is one clock for both);
- with two uvicorn processes, a move's request to one (which serves the API too) to its last event reaching
  every seat's stream held by the other (p50, p99, max): from the request's write, so it includes the move's
  own handling before its commit;
- the move request's p50 and p99 through gunicorn, without streams open and with them.

It raises its file descriptor limit (and so the servers', which it starts) to the hard limit. It creates the
database `kingscorner_bench_streams` on that server (anew each run) and uses the Redis database of
--redis-url for the cache and the wake-ups, which it empties first.
"""

import argparse
import asyncio
import multiprocessing
import os
import random
import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis  # noqa: E402

from tests.support.stack import Proxy, Stack, call, database_create, free_port  # noqa: E402

BENCH_DATABASE = "kingscorner_bench_streams"
SEATS = 4
GOALS = {"opens p99 ms": 1000.0, "KiB a stream": 64.0, "Redis connections": 2.0, "commit p99 ms": 50.0}

# How long a phase waits, once all its streams are open, before it measures.
SETTLE_SECONDS = 5.0
# A stream to open: its path, the person's token, the game and seat its arrivals are counted under (the person
# stream's: its own name, and 0), the last event id it has.
StreamSpec = tuple[str, str, str, int, int]
PERSON_STREAM = "/api/v1/players/me/stream"


# --- the reader process: every stream open, each event's arrival timed --------------------------------------


def _request(path: str, token: str, after: int) -> bytes:
    return (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        f"Authorization: Bearer {token}\r\nLast-Event-ID: {after}\r\n\r\n"
    ).encode()


async def _head(reader: asyncio.StreamReader) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"a stream was refused: {head[:300]!r}")


async def _read_stream(port: int, spec: StreamSpec, out: Connection, opened: list[int]) -> None:
    path, token, game_id, seat, after = spec
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_request(path, token, after))
    await writer.drain()
    await _head(reader)
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
                    out.send((game_id, seat, int(line[4:]), time.monotonic()))


def _raise_fd_limit() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _reader(port: int, streams: list[StreamSpec], out: Connection) -> None:
    """Opens every stream and sends (game, seat, seq, arrival) for each event, and ("opened", count) once
    all are open."""
    _raise_fd_limit()

    async def main() -> None:
        opened = [0]
        tasks = []
        for spec in streams:
            tasks.append(asyncio.create_task(_read_stream(port, spec, out, opened)))
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


def _burst(port: int, streams: list[StreamSpec], out: Connection) -> None:
    """Connects once for each stream, then writes every request at once, and sends the seconds from each
    request's write to the first byte of its stream's body (its `retry:`), then closes them all."""
    _raise_fd_limit()

    async def first_byte(
        connection: tuple[asyncio.StreamReader, asyncio.StreamWriter], request: bytes, start: asyncio.Event
    ) -> float:
        reader, writer = connection
        await start.wait()
        sent = time.monotonic()
        writer.write(request)
        await writer.drain()
        await _head(reader)
        await reader.readuntil(b"\r\n")
        await reader.read(1)
        return time.monotonic() - sent

    async def main() -> None:
        connections = [await asyncio.open_connection("127.0.0.1", port) for _ in streams]
        start = asyncio.Event()
        tasks = [
            asyncio.create_task(first_byte(connection, _request(path, token, after), start))
            for connection, (path, token, _, _, after) in zip(connections, streams, strict=True)
        ]
        await asyncio.sleep(0.5)
        start.set()
        seconds = await asyncio.gather(*tasks)
        for _, writer in connections:
            writer.close()
        out.send(list(seconds))

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


def file_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def redis_connections(url: str, pid: int) -> int:
    """The Redis connections the process holds: each names itself kingscorner:<pid> (kingscorner/cache.py)."""
    name = f"kingscorner:{pid}"
    clients: list[dict[str, str]] = redis.Redis.from_url(url).client_list()  # type: ignore[assignment]
    return sum(1 for client in clients if client.get("name") == name)


class Tables:
    """The tables of four people, their players and tokens, and the view of whoever is to move."""

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        with ThreadPoolExecutor(max_workers=8) as pool:
            self.tables: list[dict[str, Any]] = list(pool.map(self._table, range(count)))

    def _table(self, index: int) -> dict[str, Any]:
        tokens = []
        for seat in range(SEATS):
            status, body, _ = call(self.port, "POST", "/api/v1/players", {"name": f"P{index}s{seat}"})
            assert status == 201, body
            tokens.append(body["token"])
        seats = [{"kind": "person"}] * SEATS
        status, table, _ = call(
            self.port, "POST", "/api/v1/games", {"seats": seats, "target_score": 500}, tokens[0]
        )
        assert status == 201, table
        for token in tokens[1:]:
            status, body, _ = call(
                self.port, "POST", f"/api/v1/invitations/{table['invitation']['code']}", None, token
            )
            assert status == 200, body
        return {"id": table["id"], "tokens": tokens}

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

    def streams(self) -> list[StreamSpec]:
        """One stream a seat, from each table's last event (so that a stream sends only what happens)."""
        specs = []
        for table in self.tables:
            status, page, _ = call(
                self.port, "GET", f"/api/v1/games/{table['id']}/events?after=0", None, table["tokens"][0]
            )
            assert status == 200, page
            path = f"/api/v1/games/{table['id']}/stream"
            specs += [
                (path, token, table["id"], seat, page["more_after"])
                for seat, token in enumerate(table["tokens"])
            ]
        return specs

    def person_streams(self, count: int) -> list[StreamSpec]:
        """The person streams of `count` people, from their feed's first event."""
        tokens = [token for table in self.tables for token in table["tokens"]][:count]
        return [(PERSON_STREAM, token, f"person-{index}", 0, 0) for index, token in enumerate(tokens)]


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


class Reader:
    """A reader process holding `streams` open on `port`, and the arrivals it reports."""

    def __init__(self, port: int, streams: list[StreamSpec]) -> None:
        self.receiving, sending = multiprocessing.Pipe(duplex=False)
        self.process = multiprocessing.Process(target=_reader, args=(port, streams, sending), daemon=True)
        self.process.start()
        self.arrivals: dict[tuple[str, int], dict[int, float]] = {}
        while True:
            message = self.receiving.recv()
            if message[0] == "opened":
                break
        # Every stream has answered; the server is done with their first reads (and with closing the
        # streams of the phase before) a little later: the figures are those of streams that are open.
        time.sleep(SETTLE_SECONDS)

    def drain(self, timeout: float) -> None:
        while self.receiving.poll(timeout):
            game_id, seat, seq, at = self.receiving.recv()
            self.arrivals.setdefault((game_id, seq), {})[seat] = at
            timeout = 0

    def every_seat(self, game_id: str, seq: int) -> float:
        """When the event `seq` of the game had reached every seat."""
        deadline = time.monotonic() + 30
        while len(self.arrivals.get((game_id, seq), {})) < SEATS and time.monotonic() < deadline:
            self.drain(0.05)
        seen = self.arrivals.get((game_id, seq), {})
        if len(seen) < SEATS:
            raise SystemExit(f"a move's last event did not reach every seat within 30 s: {seen}")
        return max(seen.values())

    def close(self) -> None:
        self.receiving.close()
        self.process.terminate()
        self.process.join()


def burst(port: int, streams: list[StreamSpec]) -> list[float]:
    receiving, sending = multiprocessing.Pipe(duplex=False)
    process = multiprocessing.Process(target=_burst, args=(port, streams, sending), daemon=True)
    process.start()
    seconds: list[float] = receiving.recv()
    process.join()
    return seconds


def commits_to_every_seat(tables: Tables, reader: Reader, moves: int) -> list[float]:
    """Moves through the service in this process: seconds from each commit to its last event at every seat."""
    from django.db import transaction

    from games import services
    from games.models import Game, GameSeat

    players = {
        (str(row.game_id), row.seat): row.player
        for row in GameSeat.objects.select_related("player").filter(player__isnull=False)
        if row.player is not None
    }
    delays = []
    for _ in range(moves):
        table = random.choice(tables.tables)
        seat, view = tables.mover(table)
        committed: list[float] = []
        with transaction.atomic():
            transaction.on_commit(partial(_mark, committed))
            services.game_moves_apply(
                game_id=table["id"],
                player=players[(table["id"], seat)],
                moves=_one_move(view),
                expected_version=view["version"],
            )
        last_seq = Game.objects.get(id=table["id"]).event_seq
        delays.append(reader.every_seat(table["id"], last_seq) - committed[0])
        reader.drain(0)
    return delays


def requests_to_every_seat(tables: Tables, port: int, reader: Reader, moves: int) -> list[float]:
    """Move requests to the server on `port`: seconds from each request's write to its last event at every
    seat of the reader's streams (held by another process)."""
    from games.models import Game

    delays = []
    for _ in range(moves):
        table = random.choice(tables.tables)
        seat, view = tables.mover(table)
        body = {"moves": _one_move(view), "expected_version": view["version"]}
        sent = time.monotonic()
        status, answer, _ = call(
            port, "POST", f"/api/v1/games/{table['id']}/moves", body, table["tokens"][seat]
        )
        assert status == 200, answer
        last_seq = Game.objects.get(id=table["id"]).event_seq
        delays.append(reader.every_seat(table["id"], last_seq) - sent)
        reader.drain(0)
    return delays


def _ms(seconds: list[float]) -> str:
    values = [each * 1000 for each in seconds]
    p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
    return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(values):.1f} ms"


def _row(name: str, figure: str, goal: str = "", met: bool | None = None) -> None:
    verdict = "" if met is None else ("met" if met else "MISSED")
    print(f"| {name} | {figure} | {goal} | {verdict} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--streams", type=int, default=2000, help="streams held open, one a seat")
    parser.add_argument("--person-streams", type=int, default=500, help="person streams held open too")
    parser.add_argument("--burst", type=int, default=500, help="streams opened at once (half person streams)")
    parser.add_argument("--moves", type=int, default=200, help="moves whose delay to every seat is timed")
    parser.add_argument("--requests", type=int, default=100, help="move requests timed in each phase")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--web-workers", type=int, default=2)
    args = parser.parse_args()
    assert args.streams % SEATS == 0, "streams: one a seat of tables of four"
    tables_count = args.streams // SEATS
    assert args.burst <= args.streams, "the burst opens a second stream for some of the seats"
    assert args.person_streams <= args.streams, "person streams: at most one a person"
    _raise_fd_limit()

    database_url = database_create(args.database_url, BENCH_DATABASE, fresh=True)
    redis.Redis.from_url(args.redis_url).flushdb()
    stack = Stack(
        database_url=database_url,
        broker_url="memory://",
        cache_url=args.redis_url,
        extra_env={
            "CELERY_TASK_ALWAYS_EAGER": "true",
            "STREAMS_PER_PLAYER": "1000",
            "STREAMS_PER_ADDRESS": "1000000",
            "NUM_PROXIES": "1",
        },
    )
    os.environ.update(
        {key: stack.env[key] for key in ("DATABASE_URL", "REDIS_URL", "CONN_MAX_AGE", "SECRET_KEY")}
    )
    os.environ["DJANGO_SETTINGS_MODULE"] = "kingscorner.settings"
    readers: list[Reader] = []
    proxy: Proxy | None = None
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=args.web_workers)
        stack.start_stream(workers=1)
        other_port = free_port()
        stack._start_uvicorn("stream-other", other_port, 1)
        stack.wait_until_serving("stream-other", f"http://127.0.0.1:{other_port}")
        proxy = Proxy(upstream=f"127.0.0.1:{stack.port}", stream_upstream=f"127.0.0.1:{stack.stream_port}")
        proxy.start()
        stream_pid = stack.processes["stream"].pid
        print(f"{tables_count} tables of {SEATS} people; load {os.getloadavg()[0]:.1f}")
        tables = Tables(stack.port, tables_count)
        specs = tables.streams()
        people = tables.person_streams(args.person_streams)
        held = specs + people
        # Half of a burst opens game streams, half person streams.
        half = args.burst // 2
        call(stack.stream_port, "GET", "/api/v1/health")
        without = move_requests(tables, args.requests)

        import django

        django.setup()

        # 500 opens at once on an idle process.
        opens = burst(
            stack.stream_port, random.sample(specs, args.burst - half) + random.sample(people, half)
        )
        time.sleep(2)

        # The streams are held twice: a process's first streams also grow its allocator's arenas, which it
        # keeps once they close, so the first figure is a fresh process's and the second what a stream costs a
        # process that has held as many before (a server's steady state).
        rss_fresh = rss_kib(stream_pid)
        readers.append(Reader(stack.stream_port, held))
        rss_fresh_open = rss_kib(stream_pid)
        readers.pop().close()
        time.sleep(3)
        fresh_per_stream = (rss_fresh_open - rss_fresh) / len(held)

        rss_before = rss_kib(stream_pid)
        fds_before = file_descriptors(stream_pid)
        readers.append(Reader(stack.stream_port, held))
        rss_open = rss_kib(stream_pid)
        fds_open = file_descriptors(stream_pid)
        connections_open = redis_connections(args.redis_url, stream_pid)
        per_stream = (rss_open - rss_before) / len(held)
        direct = commits_to_every_seat(tables, readers[0], args.moves)
        with_streams = move_requests(tables, args.requests)
        # 500 more opens at once, with the 2,000 open.
        opens_busy = burst(
            stack.stream_port, random.sample(specs, args.burst - half) + random.sample(people, half)
        )
        readers.pop().close()
        time.sleep(3)
        connections_closed = redis_connections(args.redis_url, stream_pid)

        readers.append(Reader(proxy.port, held))
        through_nginx = commits_to_every_seat(tables, readers[0], args.moves)
        readers.pop().close()

        readers.append(Reader(other_port, held))
        other_process = requests_to_every_seat(tables, stack.stream_port, readers[0], args.moves)
        readers.pop().close()

        opened = f"{args.streams} game + {len(people)} person streams open"
        print()
        print("| figure | measured | goal | |")
        print("| --- | --- | --- | --- |")
        _row(
            f"{args.burst} opens at once, first byte (idle process)",
            _ms(opens),
            "p99 ≤ 1 s",
            percentile(opens, 0.99) * 1000 <= GOALS["opens p99 ms"],
        )
        _row(f"{args.burst} opens at once, first byte ({opened})", _ms(opens_busy))
        _row(
            f"uvicorn memory a stream, the first time a process holds them ({opened})",
            f"{fresh_per_stream:.1f} KiB ({rss_fresh / 1024:.0f} → {rss_fresh_open / 1024:.0f} MiB)",
            "≤ 64 KiB",
            fresh_per_stream <= GOALS["KiB a stream"],
        )
        _row(
            f"uvicorn memory a stream, held again ({opened})",
            f"{per_stream:.1f} KiB ({rss_before / 1024:.0f} → {rss_open / 1024:.0f} MiB)",
        )
        _row(f"uvicorn file descriptors ({opened})", f"{fds_open} ({fds_before} before)")
        _row(
            f"uvicorn Redis connections ({opened})",
            f"{connections_open} ({connections_closed} once they closed)",
            "≤ 2",
            connections_open <= GOALS["Redis connections"],
        )
        _row(
            f"commit → every seat, {opened}, straight to uvicorn",
            _ms(direct),
            "p99 ≤ 50 ms",
            percentile(direct, 0.99) * 1000 <= GOALS["commit p99 ms"],
        )
        _row(
            f"commit → every seat, {opened}, through nginx",
            _ms(through_nginx),
            "p99 ≤ 50 ms",
            percentile(through_nginx, 0.99) * 1000 <= GOALS["commit p99 ms"],
        )
        _row(f"move request to one uvicorn → every seat on the other ({opened})", _ms(other_process))
        for name, times in (
            ("without streams", without),
            (f"with {opened}", with_streams),
        ):
            _row(f"move request through gunicorn, {name}", _ms(times))
        print(f"\nload {os.getloadavg()[0]:.1f}")
    finally:
        for reader in readers:
            reader.close()
        if proxy is not None:
            proxy.close()
        stack.close()


if __name__ == "__main__":
    main()
