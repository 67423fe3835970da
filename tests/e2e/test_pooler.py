"""The production topology behind PgBouncer, as docker-compose.yml runs it, started without Docker: Debian's
pgbouncer running deploy/pgbouncer.ini (transaction pooling) between PostgreSQL and gunicorn, uvicorn, a
Celery worker and beat (DATABASE_PREPARED_STATEMENTS=false), nginx in front. The move path, a stream and the
daily run through it, migrations straight to PostgreSQL as compose's `migrate` does, and the requests'
statement timeout applies on the pooler's server connections. The tests run in file order and share one
stack."""

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
import redis

from games.engine import Rules
from games.engine.players import best_turn
from kingscorner.database import connection_options
from tests.support.ci import IN_CI
from tests.support.stack import (
    ROOT,
    Pooler,
    Proxy,
    Stack,
    call,
    database_create,
    database_drop,
    database_name,
    nginx_binary,
    pgbouncer_binary,
)
from tests.support.streams import EventStreamClient

pytestmark = pytest.mark.postgres

SERVER_URL = os.environ.get("E2E_DATABASE_SERVER_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_SERVER = os.environ.get("E2E_REDIS_URL", "redis://127.0.0.1:6379")
# Databases of their own: test_streams uses 11 and 12, test_topology 13 and 14; a stock Redis has 16.
BROKER_URL = f"{REDIS_SERVER}/9"
CACHE_URL = f"{REDIS_SERVER}/10"
# Bounds on waiting for what the services do; never a figure the test checks.
PATIENCE = 90.0
# The settings' default DATABASE_STATEMENT_TIMEOUT, which deploy/pgbouncer.ini's connect_query repeats.
STATEMENT_TIMEOUT = 5


@dataclass
class Topology:
    stack: Stack
    proxy: Proxy
    pooler: Pooler
    database: str

    @property
    def port(self) -> int:
        return self.proxy.port


def _needs(binary: str | None, package: str) -> None:
    if binary is None:
        message = f"needs {package} (Debian: apt-get install {package}); .ci/run installs it"
        if IN_CI:
            pytest.fail(f"CI is set but {package} is missing: {message}", pytrace=False)
        pytest.skip(message)


@pytest.fixture(scope="module")
def topology() -> Iterator[Topology]:
    _needs(nginx_binary(), "nginx")
    _needs(pgbouncer_binary(), "pgbouncer")
    name = f"kingscorner_pooler_{uuid.uuid4().hex[:12]}"
    for url in (BROKER_URL, CACHE_URL):
        redis.Redis.from_url(url).flushdb()
    stack = Stack(
        database_url=database_create(SERVER_URL, name, fresh=True),
        broker_url=BROKER_URL,
        cache_url=CACHE_URL,
        extra_env={
            "NUM_PROXIES": "1",
            "DAILY_BEAT_INTERVAL_SECONDS": "2",
            "DATABASE_STATEMENT_TIMEOUT": str(STATEMENT_TIMEOUT),
        },
    )
    pooler = Pooler()
    proxy: Proxy | None = None
    try:
        # Straight to PostgreSQL, as compose's `migrate`; everything else through the pooler.
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        pooler.start()
        stack.env["DATABASE_URL"] = pooler.url(database_name(name))
        stack.env["DATABASE_PREPARED_STATEMENTS"] = "false"
        stack.start_web(workers=2)
        stack.start_stream()
        stack.start_worker()
        stack.start_beat()
        proxy = Proxy(upstream=f"127.0.0.1:{stack.port}", stream_upstream=f"127.0.0.1:{stack.stream_port}")
        proxy.start()
        yield Topology(stack=stack, proxy=proxy, pooler=pooler, database=database_name(name))
    finally:
        if proxy is not None:
            proxy.close()
        stack.close()
        pooler.close()
        database_drop(SERVER_URL, name)
        shutil.rmtree(stack.logs, ignore_errors=True)


def _api(topology: Topology, method: str, path: str, body: Any = None, token: str = "") -> tuple[int, Any]:
    status, data, _ = call(topology.port, method, f"/api/v1/{path}", body, token)
    return status, data


def _transactions(topology: Topology) -> int:
    """Transactions the pooler has passed on to the test's database."""
    stats = {row["database"]: row for row in topology.pooler.show("STATS")}
    return int(stats[topology.database]["total_xact_count"]) if topology.database in stats else 0


def test_the_move_path_and_a_stream_run_through_the_pooler(topology: Topology) -> None:
    before = _transactions(topology)
    status, player = _api(topology, "POST", "players", {"name": "Ada"})
    assert status == 201, player
    token = player["token"]
    status, game = _api(topology, "POST", "games", {"opponents": 1, "target_score": None}, token)
    assert status == 201 and game["is_your_turn"], game
    status, ticket = _api(topology, "POST", f"games/{game['id']}/stream-tickets", token=token)
    assert status == 201, ticket
    stream = EventStreamClient(topology.port, f"/api/v1/games/{game['id']}/stream?ticket={ticket['ticket']}")
    try:
        assert stream.status == 200, stream.body()
        view = game
        for _ in range(6):
            if view["status"] != "playing" or not view["is_your_turn"]:
                break
            moves = [
                move.to_json()
                for move in best_turn(Rules.from_json(view["rules"]), view["hand"], view["table"]["piles"])
            ]
            status, view = _api(
                topology,
                "POST",
                f"games/{game['id']}/moves",
                {"moves": moves, "expected_version": view["version"]},
                token,
            )
            assert status == 200, view
        status, page = _api(topology, "GET", f"games/{game['id']}/events?after=0", token=token)
        assert status == 200 and page["more_after"] >= 2, page
        # The stream delivers every event the log holds, in order, the computer's turns included.
        received = stream.events_until(page["more_after"], timeout=PATIENCE)
        assert [message.data for message in received][: len(page["items"])] == page["items"]
    finally:
        stream.close()
    assert "/stream?ticket=" in topology.stack.log("stream")
    # The API's and the stream's connections are the pooler's clients, and their transactions went through it.
    assert _transactions(topology) > before + 6
    clients = [row for row in topology.pooler.show("CLIENTS") if row["database"] == topology.database]
    assert len(clients) >= 2, clients


def test_the_daily_is_dealt_by_beat_and_played_to_the_leaderboard_through_the_pooler(
    topology: Topology,
) -> None:
    today = datetime.now(UTC).date()
    deadline = time.monotonic() + PATIENCE
    # The test's own connection through the pooler never prepares (psycopg would from its fifth execution,
    # and a prepared statement does not survive transaction pooling), as the application's do not.
    with psycopg.connect(
        topology.pooler.url(topology.database), autocommit=True, prepare_threshold=None
    ) as conn:
        while not conn.execute("SELECT 1 FROM daily_dailydeal WHERE date = %s", [today]).fetchone():
            assert time.monotonic() < deadline, topology.stack.log("worker") + topology.stack.log("beat")
            time.sleep(0.5)
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "client.py"),
            "--base-url",
            topology.proxy.base_url,
            "--name",
            "Pooled bot",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    status, board = _api(topology, "GET", f"daily/{today.isoformat()}/leaderboard")
    assert status == 200, board
    assert "Pooled bot" in [entry["player"]["name"] for entry in board["items"]]
    for name in ("web", "stream", "worker", "beat"):
        assert "prepared statement" not in topology.stack.log(name), topology.stack.log(name)


def test_the_statement_timeout_applies_behind_the_pooler(topology: Topology) -> None:
    # The application's own connection, from its settings: PgBouncer drops its `options` and its server
    # connection carries the timeout from deploy/pgbouncer.ini's connect_query.
    shown = topology.stack.manage(
        "shell",
        "-c",
        "from django.db import connection\n"
        "with connection.cursor() as cursor:\n"
        "    cursor.execute('SHOW statement_timeout')\n"
        "    print(cursor.fetchone()[0])",
    )
    assert shown.stdout.strip().splitlines()[-1] == f"{STATEMENT_TIMEOUT}s"
    options = connection_options(connect_timeout=3, statement_timeout=STATEMENT_TIMEOUT, keepalives_idle=10)
    with psycopg.connect(topology.pooler.url(topology.database), autocommit=True, **options) as conn:
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("SELECT pg_sleep(%s)", [STATEMENT_TIMEOUT + 2])


def test_without_ignoring_options_the_pooler_refuses_the_applications_connections() -> None:
    """Why deploy/pgbouncer.ini lists `options` in ignore_startup_parameters."""
    _needs(pgbouncer_binary(), "pgbouncer")
    pooler = Pooler(overrides={"ignore_startup_parameters": "extra_float_digits"})
    pooler.start()
    try:
        options = connection_options(
            connect_timeout=3, statement_timeout=STATEMENT_TIMEOUT, keepalives_idle=10
        )
        with pytest.raises(psycopg.OperationalError, match="options"):
            psycopg.connect(pooler.url("postgres"), **options).close()
    finally:
        pooler.close()


def test_prepared_statements_break_behind_the_pooler_and_server_side_binding_does_not() -> None:
    """Why the application runs with DATABASE_PREPARED_STATEMENTS=false behind PgBouncer before 1.21: two
    clients lent the same server connection in turn (a pool of one) each prepare psycopg's first statement
    name there, and the second finds it taken (or, lent another connection, missing); with preparing off
    (`prepare_threshold` None, as the settings leave it) the same parameters are bound on the server in
    unnamed statements, which live within their transaction."""
    _needs(pgbouncer_binary(), "pgbouncer")
    pooler = Pooler(overrides={"default_pool_size": "1", "reserve_pool_size": "0"})
    pooler.start()
    try:
        url = pooler.url("postgres")
        query = "SELECT %s::bigint + 1"
        with psycopg.connect(url, autocommit=True, prepare_threshold=0) as first:
            with psycopg.connect(url, autocommit=True, prepare_threshold=0) as second:
                assert first.execute(query, [1], prepare=True).fetchone() == (2,)
                with pytest.raises(psycopg.errors.DuplicatePreparedStatement):
                    second.execute(query, [2], prepare=True)
        with psycopg.connect(url, autocommit=True, prepare_threshold=None) as first:
            with psycopg.connect(url, autocommit=True, prepare_threshold=None) as second:
                for value in range(10):
                    for conn in (first, second):
                        assert conn.execute(query, [value], prepare=True).fetchone() == (value + 1,)
    finally:
        pooler.close()
