"""Database work of the ASGI server's event streams, run off the event loop on a few threads of the process's
own: a stream's open (its authentication, its first read) and its reads of the event log. So an open stream
holds no thread and no database connection while it waits, and opens run side by side instead of one after
another on the one thread Django gives synchronous work that has no request thread of its own."""

import asyncio
import enum
import itertools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from functools import partial
from typing import Any, TypeVar

from django.db import InterfaceError, OperationalError, connection

T = TypeVar("T")

# Each thread keeps its database connection for CONN_MAX_AGE, as a request's thread would: at most this many
# connections a process, whatever the number of streams.
READ_THREADS = 4


class Priority(enum.IntEnum):
    """Which work the reader threads take first, when more waits than they can do at once (thousands of
    streams opening together, then reading their logs for the first time and beating): a read that a
    commit's wake-up asked for (the delay from a move to every seat), then a stream open's checks (the time
    to its first byte), then everything else (a stream's first read, its heartbeat's and poll's reads)."""

    WOKEN = 0
    OPEN = 1
    ROUTINE = 2


class _Readers(Executor):
    """READ_THREADS threads that take the work handed to them by its Priority, and in the order it came
    within one."""

    def __init__(self, threads: int) -> None:
        self._queue: queue.PriorityQueue[tuple[int, int, Callable[[], Any], Future[Any]]] = (
            queue.PriorityQueue()
        )
        self._order = itertools.count()
        for index in range(threads):
            threading.Thread(target=self._run, name=f"stream-read_{index}", daemon=True).start()

    def submit_at(self, priority: Priority, fn: Callable[..., T], /, *args: Any) -> "Future[T]":
        future: Future[T] = Future()
        self._queue.put((priority, next(self._order), partial(fn, *args), future))
        return future

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> "Future[T]":
        return self.submit_at(Priority.ROUTINE, partial(fn, *args, **kwargs))

    def _run(self) -> None:
        while True:
            _, _, work, future = self._queue.get()
            # Work whose caller went away (a stream closed meanwhile) is not done.
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = work()
            except BaseException as error:
                future.set_exception(error)
            else:
                future.set_result(result)


_executor: _Readers | None = None
_executor_lock = threading.Lock()
# The event loop whose work a reader thread is doing now.
_calling = threading.local()


def executor() -> _Readers:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = _Readers(READ_THREADS)
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


# The event loop of the ASGI server this process runs (uvicorn's, set at its lifespan's startup): the other
# threads of the process send their Redis commands over its one connection (kingscorner/cache.py).
_server_loop: asyncio.AbstractEventLoop | None = None


def server_loop_set(loop: asyncio.AbstractEventLoop | None) -> None:
    global _server_loop
    _server_loop = loop


def command_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop whose one Redis connection this thread's commands go over, so that a process serving
    streams holds one connection for its commands whatever it serves: a stream reader's caller, or the ASGI
    server's loop for the process's other threads (its synchronous requests'). None outside an ASGI server, on
    the loop's own thread (which must not wait on itself), and once the loop has closed."""
    loop = calling_loop() or _server_loop
    if loop is None or loop.is_closed() or not loop.is_running():
        return None
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    return None if running is loop else loop


async def read_off_loop(work: Callable[[], T], priority: Priority = Priority.ROUTINE) -> T:
    """Runs `work` (database reads, or a stream open's checks) on the stream readers' threads, by its
    priority."""
    loop = asyncio.get_running_loop()
    return await asyncio.wrap_future(executor().submit_at(priority, _on_connection, loop, work), loop=loop)
