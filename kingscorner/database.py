"""Bounds on how long a request waits for PostgreSQL: the connection's options (connect timeout, TCP
keepalives, the server's statement timeout) and a client-side deadline on every wait for the server.

A server that is hung (stopped by SIGSTOP, a frozen VM, a partition that still acknowledges TCP) never
enforces its own statement timeout, and the kernel keeps answering keepalive probes of a stopped process; so
every wait of a connection for its server (a query, its results, a commit, a rollback) is bounded here too,
by psycopg's own wait with a timeout: past it the connection is closed and the request fails with an
OperationalError without SQLSTATE, which the API answers with 503 `database_unavailable` and Retry-After."""

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import psycopg
from psycopg import errors

# Seconds the client waits on a server that has sent nothing, beyond the server's own statement timeout,
# before it takes the server for hung: the server's timeout, when it is alive, answers first.
RESPONSE_GRACE_SECONDS = 1.0


def connection_options(
    *, connect_timeout: int, statement_timeout: float, keepalives_idle: int
) -> dict[str, Any]:
    """psycopg's connection options for the settings: a connect timeout, TCP keepalives (a peer that vanished
    is found within `keepalives_idle` plus three probes 2 s apart, and unacknowledged data gives up as soon),
    and the server's `statement_timeout` (0: none)."""
    options: dict[str, Any] = {
        "connect_timeout": connect_timeout,
        "keepalives": 1,
        "keepalives_idle": keepalives_idle,
        "keepalives_interval": 2,
        "keepalives_count": 3,
        "tcp_user_timeout": (keepalives_idle + 6) * 1000,
    }
    if statement_timeout > 0:
        options["options"] = f"-c statement_timeout={round(statement_timeout * 1000)}"
    return options


class DeadlineConnection(psycopg.Connection[Any]):
    """psycopg's connection whose every wait on the server has a deadline (`response_timeout`, seconds;
    None: none). Past it, the connection is closed: its state is unknown, so nothing may reuse it."""

    response_timeout: float | None = None

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        try:
            return super().wait(gen, interval, self.response_timeout if timeout is None else timeout)
        except errors._WaitTimeout:
            self.pgconn.finish()
            raise psycopg.OperationalError(
                f"the database sent nothing for {self.response_timeout} s; the connection is closed"
            ) from None


def response_timeout(statement_timeout: float) -> float | None:
    """The client's deadline for a statement timeout (0: none, and no deadline)."""
    return statement_timeout + RESPONSE_GRACE_SECONDS if statement_timeout > 0 else None


def _deadline_on(sender: Any, connection: Any, **kwargs: Any) -> None:
    from django.conf import settings

    raw = connection.connection
    if connection.vendor != "postgresql" or not isinstance(raw, psycopg.Connection):
        return
    timeout = response_timeout(settings.DATABASE_STATEMENT_TIMEOUT)
    if timeout is None:
        return
    # The same object, with the one overridden method: what Django configured on it stays.
    raw.__class__ = DeadlineConnection
    assert isinstance(raw, DeadlineConnection)
    raw.response_timeout = timeout


def deadlines_install() -> None:
    """Every new PostgreSQL connection waits on its server at most DATABASE_STATEMENT_TIMEOUT plus a grace.
    (Django is imported here, not at the top: the settings import this module.)"""
    from django.db.backends.signals import connection_created

    connection_created.connect(_deadline_on, dispatch_uid="kingscorner.database.deadline")


# One probe at a time per process: health checks that arrive while one is waiting on the database share it,
# so a hung database holds one thread here, not one per check.
_probe_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="database-probe")
_probe_lock = threading.Lock()
_probe: Future[bool] | None = None


def _select_one() -> bool:
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except DatabaseError:
        return False
    finally:
        # The probe's thread holds no connection between checks.
        connection.close()


def database_answers(*, within: float) -> bool:
    """Whether the database answers `SELECT 1` within `within` seconds, on a connection of the probe's own;
    a probe still waiting after that goes on in the background, bounded by the connect timeout and the
    statement deadline, and the checks meanwhile wait on it."""
    global _probe
    with _probe_lock:
        if _probe is None or _probe.done():
            _probe = _probe_executor.submit(_select_one)
        probe = _probe
    try:
        return probe.result(timeout=within)
    except FutureTimeout:
        return False
