"""Database work of the ASGI server's event streams, run off the event loop on a few threads of the process's
own: a stream's open (its authentication, its first read) and its reads of the event log. So an open stream
holds no thread and no database connection while it waits, and opens run side by side instead of one after
another on the one thread Django gives synchronous work that has no request thread of its own."""

import asyncio
import enum
import itertools
import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Executor, Future
from functools import partial
from typing import Any, Protocol, TypeVar

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


class _Outcome(Protocol):
    """Where a reader thread puts the outcome of a piece of work."""

    def claim(self) -> bool:
        """False when the work's caller went away (a stream closed meanwhile): the work is not done."""

    def resolve(self, result: Any) -> None: ...

    def fail(self, error: BaseException) -> None: ...


class _FutureOutcome:
    """A concurrent.futures Future's (Executor.submit's)."""

    __slots__ = ("future",)

    def __init__(self, future: "Future[Any]") -> None:
        self.future = future

    def claim(self) -> bool:
        return self.future.set_running_or_notify_cancel()

    def resolve(self, result: Any) -> None:
        self.future.set_result(result)

    def fail(self, error: BaseException) -> None:
        self.future.set_exception(error)


class _LoopResults:
    """The outcomes of one event loop's awaited work, handed to the loop in batches: the reader that finishes
    a batch's first piece of work wakes the loop (one `call_soon_threadsafe`), and the loop sets every
    outcome that came meanwhile in one callback. asyncio.wrap_future costs each piece of work a wake-up of
    its own and a chain of callbacks on both sides, a tenth of a burst of stream opens' CPU."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._lock = threading.Lock()
        self._ready: list[tuple[asyncio.Future[Any], bool, Any]] = []

    def put(self, future: "asyncio.Future[Any]", ok: bool, value: Any) -> None:
        with self._lock:
            first = not self._ready
            self._ready.append((future, ok, value))
        if first:
            try:
                self.loop.call_soon_threadsafe(self._deliver)
            except RuntimeError:
                # The loop has closed: nobody awaits these any more.
                with self._lock:
                    self._ready.clear()

    def _deliver(self) -> None:
        with self._lock:
            ready, self._ready = self._ready, []
        for future, ok, value in ready:
            # A future cancelled meanwhile (its stream closed) takes no outcome.
            if future.done():
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)


class _LoopOutcome:
    """An asyncio future's, awaited on its loop (read_off_loop)."""

    __slots__ = ("future", "results")

    def __init__(self, future: "asyncio.Future[Any]", results: _LoopResults) -> None:
        self.future = future
        self.results = results

    def claim(self) -> bool:
        # Read from the reader's thread: a future cancelled an instant later is only work done for nothing.
        return not self.future.done()

    def resolve(self, result: Any) -> None:
        self.results.put(self.future, True, result)

    def fail(self, error: BaseException) -> None:
        self.results.put(self.future, False, error)


# Each event loop's outcomes, for as long as the loop exists.
_loop_results: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopResults]" = (
    weakref.WeakKeyDictionary()
)


def _results_of(loop: asyncio.AbstractEventLoop) -> _LoopResults:
    """The loop's _LoopResults (called on the loop, so no other thread makes one for it at the same time)."""
    results = _loop_results.get(loop)
    if results is None:
        results = _loop_results[loop] = _LoopResults(loop)
    return results


class _Readers(Executor):
    """READ_THREADS threads that take the work handed to them by its Priority, and in the order it came
    within one."""

    def __init__(self, threads: int) -> None:
        self._queue: queue.PriorityQueue[tuple[int, int, Callable[[], Any], _Outcome]] = queue.PriorityQueue()
        self._order = itertools.count()
        for index in range(threads):
            threading.Thread(target=self._run, name=f"stream-read_{index}", daemon=True).start()

    def submit_at(self, priority: Priority, fn: Callable[..., T], /, *args: Any) -> "Future[T]":
        future: Future[T] = Future()
        self._queue.put((priority, next(self._order), partial(fn, *args), _FutureOutcome(future)))
        return future

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> "Future[T]":
        return self.submit_at(Priority.ROUTINE, partial(fn, *args, **kwargs))

    def awaitable_at(
        self, loop: asyncio.AbstractEventLoop, priority: Priority, work: Callable[[], T]
    ) -> "asyncio.Future[T]":
        """`work` by its priority, its outcome an asyncio future of `loop` (the running one)."""
        future: asyncio.Future[T] = loop.create_future()
        self._queue.put((priority, next(self._order), work, _LoopOutcome(future, _results_of(loop))))
        return future

    def _run(self) -> None:
        while True:
            _, _, work, outcome = self._queue.get()
            # Work whose caller went away (a stream closed meanwhile) is not done.
            if not outcome.claim():
                continue
            try:
                result = work()
            except BaseException as error:
                outcome.fail(error)
            else:
                outcome.resolve(result)


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
    return await executor().awaitable_at(loop, priority, partial(_on_connection, loop, work))
