"""Database work of the ASGI server's event streams, run off the event loop on a few threads of the process's
own: a stream's open (its authentication, its first read) and its reads of the event log. So an open stream
holds no thread and no database connection while it waits, and opens run side by side instead of one after
another on the one thread Django gives synchronous work that has no request thread of its own."""

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from django.db import InterfaceError, OperationalError, connection

T = TypeVar("T")

# Each thread keeps its database connection for CONN_MAX_AGE, as a request's thread would: at most this many
# connections a process, whatever the number of streams.
READ_THREADS = 4
_executor: ThreadPoolExecutor | None = None
# The event loop whose work a reader thread is doing now.
_calling = threading.local()


def executor() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=READ_THREADS, thread_name_prefix="stream-read")
    return _executor


def calling_loop() -> asyncio.AbstractEventLoop | None:
    """On a stream reader thread, the event loop that handed it the work it is doing; None elsewhere."""
    loop: asyncio.AbstractEventLoop | None = getattr(_calling, "loop", None)
    return loop


def _on_connection(loop: asyncio.AbstractEventLoop, work: Callable[[], T]) -> T:
    """`work` on this thread's connection, kept as a request keeps it (without the health check Django makes
    at each request's start, a round trip): a connection found broken is replaced and the work done again,
    once, and after the work one that had an error and no longer answers, or has outlived CONN_MAX_AGE, is
    closed, as Django closes a request's at its end."""
    _calling.loop = loop
    try:
        try:
            return work()
        except (OperationalError, InterfaceError):
            connection.close()
            return work()
    finally:
        _calling.loop = None
        connection.close_if_unusable_or_obsolete()


async def read_off_loop(work: Callable[[], T]) -> T:
    """Runs `work` (database reads, or a stream open's checks) on the stream readers' threads."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor(), _on_connection, loop, work)
