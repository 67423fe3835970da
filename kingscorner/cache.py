"""Django's Redis cache, made to fail open (while Redis is down or hung, reads miss and writes are dropped),
and to hold one connection pool a process, however many cache objects Django makes."""

import asyncio
import hashlib
import logging
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import redis
import redis.asyncio
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

from kingscorner.off_loop import command_loop

logger = logging.getLogger(__name__)

T = TypeVar("T")

# One rate-limit window's count, atomically: increments KEYS[1], gives it an expiry of ARGV[1] milliseconds
# if it has none (it was just created, or something else made it), and answers the count and the
# milliseconds its window has left. A script runs alone on the server, so racing requests each see their own
# count; Redis gives a missing key a count of 1 and never lets a window outlive its expiry.
WINDOW_HIT_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {count, left}
"""
WINDOW_HIT_SHA = hashlib.sha1(WINDOW_HIT_SCRIPT.encode()).hexdigest()
_WINDOW_HIT_SHA = WINDOW_HIT_SHA.encode()
# A window's count and the time it has left, copied to another key (a rotated token's window goes on under
# the new token).
WINDOW_COPY_SCRIPT = """
local count = redis.call('GET', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if count and left > 0 then
  redis.call('SET', KEYS[2], count, 'PX', left)
end
return 0
"""


def client_name() -> str:
    """The name this process gives each of its Redis connections (`CLIENT SETNAME`), so that Redis's
    `CLIENT LIST` shows which process holds which: `kingscorner:<pid>`."""
    return f"kingscorner:{os.getpid()}"


# Django makes a cache object for each thread and, under ASGI, for each request's context (an event stream's
# too), each with a connection pool of its own, and the rate limit kept one connection a thread for each of
# them: a process with 200 streams open held 200 connections, and kept them after the streams closed. Every
# cache object of one configuration in a process shares one pool, and one connection a thread for its rate
# limit's counts, made on first use.
_shared_lock = threading.Lock()


class _ThreadWindow:
    """A thread's connection for its rate-limit counts (FailOpenRedisCache._window_connection), and the count
    sent on it whose answer is not read yet. Under ASGI each request runs on a thread of its own that ends
    with it (Django's ThreadSensitiveContext): when the thread ends, its connection goes to the spares of its
    configuration, for the next thread that counts, instead of staying checked out of the pool for ever (a
    connection a request, never closed)."""

    __slots__ = ("connection", "unread", "_spares")

    def __init__(self, spares: "deque[tuple[Any, bool]]") -> None:
        self.connection: Any = None
        self.unread: WindowHit | None = None
        self._spares = spares

    def __del__(self) -> None:
        # Only an append (atomic, no lock), whatever thread the thread's locals are cleared on. A count whose
        # answer was not read leaves the connection with a reply to come: its next user closes it first.
        connection, unread = self.connection, self.unread
        if connection is not None:
            pending = unread is not None and unread._connection is connection
            self._spares.append((connection, not pending))


class _Outage:
    """A Redis location's failure as the process knows it, shared by every cache object of its configuration:
    Django's cache handler makes one a thread and, under ASGI, one a request (each request runs in a context
    and on a thread of its own), and a back-off kept on the object was forgotten with it, so that under
    uvicorn every request waited a socket timeout for a hung Redis and logged its warning. Until when calls
    leave Redis alone, when the last warning was logged, and how many calls were answered without Redis since
    then; read and written under `lock`."""

    __slots__ = ("lock", "unavailable_until", "warned_at", "failed_calls")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.unavailable_until = 0.0
        self.warned_at: float | None = None
        self.failed_calls = 0


class _Shared:
    """What every cache object of one configuration in the process shares: its client (with its pools), each
    thread's rate-limit connection (a _ThreadWindow, in `threads`), the connections of ended threads, and
    its location's outage."""

    def __init__(self, client: RedisCacheClient) -> None:
        self.client = client
        self.outage = _Outage()
        self.threads = threading.local()
        self.spares: deque[tuple[Any, bool]] = deque()

    def thread_window(self) -> _ThreadWindow:
        window: _ThreadWindow | None = getattr(self.threads, "window", None)
        if window is None:
            window = self.threads.window = _ThreadWindow(self.spares)
        return window


_shared_configurations: dict[str, _Shared] = {}


def _shared(key: str, make: Callable[[], RedisCacheClient]) -> _Shared:
    with _shared_lock:
        if key not in _shared_configurations:
            _shared_configurations[key] = _Shared(make())
        return _shared_configurations[key]


# An event loop's streams (a uvicorn process's) send their commands over one connection, whatever their
# number: their leases (games/stream_leases.py) and the rate-limit counts of their opens, which the stream
# readers' threads send through the loop. A command is one round trip of a short script; a burst of them
# waits its turn for the connection (at most this long, then fails open) rather than opening one each.
LOOP_CONNECTION_WAIT_SECONDS = 2.0
_loop_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


def loop_client(url: str, loop: asyncio.AbstractEventLoop) -> Any:
    """The event loop's one-connection Redis client for `url` (a redis.asyncio.Redis)."""
    with _shared_lock:
        clients = _loop_clients.setdefault(loop, {})
        if url not in clients:
            pool = redis.asyncio.BlockingConnectionPool.from_url(
                url,
                max_connections=1,
                timeout=LOOP_CONNECTION_WAIT_SECONDS,
                socket_connect_timeout=0.5,
                socket_timeout=0.5,
                client_name=client_name(),
            )
            clients[url] = redis.asyncio.Redis(connection_pool=pool)
        return clients[url]


class CommandBatches:
    """Redis commands sent over one client's connection together: each command given while none is on its
    way is sent at once, and those given meanwhile are sent together once its answer is in, as one pipeline
    (one write, one round trip, answers in order). So a burst of stream opens, or thousands of streams'
    lease renewals, waits one round trip for a batch rather than one each behind all the others (the
    connection carries one command, or one batch, at a time). A command's error (a script Redis does not
    know yet) is its own; an error of the connection is every command's of that batch."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._pending: list[tuple[tuple[Any, ...], asyncio.Future[Any]]] = []
        self._sending = False

    async def execute(self, *command: Any) -> Any:
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.append((command, answer))
        if not self._sending:
            self._sending = True
            asyncio.ensure_future(self._send())
        return await answer

    async def _send(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                batch = [(command, answer) for command, answer in batch if not answer.done()]
                if not batch:
                    continue
                try:
                    if len(batch) == 1:
                        answers = [await self.client.execute_command(*batch[0][0])]
                    else:
                        async with self.client.pipeline(transaction=False) as pipeline:
                            for command, _ in batch:
                                pipeline.execute_command(*command)
                            answers = await pipeline.execute(raise_on_error=False)
                except Exception as error:
                    answers = [error] * len(batch)
                for (_, answer), result in zip(batch, answers, strict=True):
                    if answer.done():
                        continue
                    if isinstance(result, Exception):
                        answer.set_exception(result)
                    else:
                        answer.set_result(result)
        except BaseException:
            # The loop is closing (its tasks are cancelled): every command waiting is too.
            for _, answer in self._pending:
                answer.cancel()
            self._pending = []
            raise
        finally:
            self._sending = False


_loop_batches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, CommandBatches]] = (
    weakref.WeakKeyDictionary()
)


def loop_commands(url: str, loop: asyncio.AbstractEventLoop) -> CommandBatches:
    """The event loop's commands for `url`, batched on its one connection (loop_client)."""
    client = loop_client(url, loop)
    with _shared_lock:
        batches = _loop_batches.setdefault(loop, {})
        if url not in batches or batches[url].client is not client:
            batches[url] = CommandBatches(client)
        return batches[url]


async def _window_hit_on_loop(commands: CommandBatches, redis_key: str, milliseconds: int) -> tuple[int, int]:
    try:
        count, left = await commands.execute("EVALSHA", WINDOW_HIT_SHA, 1, redis_key, milliseconds)
    except redis.exceptions.NoScriptError:
        count, left = await commands.execute("EVAL", WINDOW_HIT_SCRIPT, 1, redis_key, milliseconds)
    return int(count), int(left)


class _LoopCount:
    """A rate-limit count sent by a stream reader thread through its event loop's connection, in the place
    of a connection of the thread's own: `read_response` waits for its answer."""

    def __init__(self, future: Any, timeout: float) -> None:
        self._future = future
        self._timeout = timeout

    def read_response(self) -> tuple[int, int]:
        answer: tuple[int, int] = _loop_result(self._future, self._timeout)
        return answer


def _loop_result(future: Any, timeout: float) -> Any:
    """The answer of a command sent through an event loop's connection, as the synchronous client's errors."""
    try:
        return future.result(timeout)
    except TimeoutError:
        future.cancel()
        raise redis.TimeoutError("no answer from Redis in time") from None
    except OSError as error:
        raise redis.ConnectionError(str(error)) from error


class FailOpenRedisCache(RedisCache):
    """The cache holds only rate-limit counters, which are worth less than the requests they count: when Redis
    fails, a read answers its default (so every request is let through) and a write does nothing, instead of a
    500. After a failure the backend leaves Redis alone for `retry_interval` seconds, so that a hung Redis
    costs one socket timeout per process and interval rather than one per cache call (then one call tries it,
    and the others leave it alone for the next interval, far longer than a call's socket timeouts, so while
    that call waits for its answer too), and it logs a warning at most once per `warning_interval` seconds
    while it lasts, and once when Redis answers again. That state is the process's, one for each configuration
    of a location (_Shared's _Outage) and shared by every cache object Django makes for it, so that it holds
    under ASGI too, where each request has cache objects of its own.

    The socket timeouts that bound each call come from OPTIONS (`socket_connect_timeout`,
    `socket_timeout`), which Django passes to redis-py's connection pool."""

    retry_interval = 5.0
    warning_interval = 60.0

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        # A redis.Redis; Any, as the stubs type replies for the async client too.
        self._window_client: Any = None
        self._shared = _shared(
            f"{server}|{sorted(params.get('OPTIONS', {}).items())!r}",
            # django-stubs do not name RedisCache's `_servers` and `_options`.
            lambda: RedisCacheClient(
                self._servers,  # type: ignore[attr-defined]
                client_name=client_name(),
                **self._options,  # type: ignore[attr-defined]
            ),
        )
        # RedisCache's `_cache` (a cached property, read from the object's dict once set): the process's
        # client for this configuration, with its pools.
        self.__dict__["_cache"] = self._shared.client
        self._outage = self._shared.outage

    def _skipping(self) -> bool:
        """Whether Redis failed less than `retry_interval` ago; such calls count as failed without trying.
        The first call after the interval tries Redis, and pushes the next try an interval on, so that the
        calls that come while it waits for its answer (a hung Redis's timeout, far shorter than the interval)
        leave Redis alone too: it answers (_recovered) or fails (_failed) for them all."""
        outage = self._outage
        with outage.lock:
            if not outage.unavailable_until:
                return False
            now = time.monotonic()
            if now < outage.unavailable_until:
                outage.failed_calls += 1
                return True
            outage.unavailable_until = now + self.retry_interval
        return False

    def _failed(self, error: Exception) -> None:
        outage = self._outage
        now = time.monotonic()
        with outage.lock:
            outage.unavailable_until = now + self.retry_interval
            outage.failed_calls += 1
            if outage.warned_at is not None and now - outage.warned_at < self.warning_interval:
                return
            outage.warned_at = now
            calls, outage.failed_calls = outage.failed_calls, 0
        logger.warning(
            "Redis cache unavailable (%s: %s); %d cache call(s) answered without it, so requests are not "
            "rate-limited until it answers again",
            type(error).__name__,
            error,
            calls,
        )

    def _guarded(self, call: Callable[[], T], fallback: T) -> T:
        if self._skipping():
            return fallback
        try:
            result = call()
        except redis.RedisError as error:
            self._failed(error)
            return fallback
        if self._outage.unavailable_until:
            self._recovered()
        return result

    def _recovered(self) -> None:
        outage = self._outage
        with outage.lock:
            if not outage.unavailable_until:
                return
            outage.unavailable_until = 0.0
            outage.warned_at = None
            calls, outage.failed_calls = outage.failed_calls, 0
        logger.warning("Redis cache answers again; %d cache call(s) were answered without it", calls)

    def available(self) -> bool:
        """Whether Redis answers a PING now (false at once while a recent failure is being waited out)."""
        # django-stubs do not name RedisCache's client wrapper, `_cache`.
        loop = command_loop()
        if loop is not None:
            # In the ASGI server, over its event loop's one connection.
            url = self._servers[0]  # type: ignore[attr-defined]

            def ping() -> bool:
                future = asyncio.run_coroutine_threadsafe(loop_client(url, loop).ping(), loop)
                return bool(_loop_result(future, self._loop_timeout()))

            return self._guarded(ping, False)
        client = self._cache.get_client  # type: ignore[attr-defined]
        return self._guarded(lambda: bool(client(write=True).ping()), False)

    def _loop_timeout(self) -> float:
        return LOOP_CONNECTION_WAIT_SECONDS + 2 * float(self._options.get("socket_timeout") or 0.5)  # type: ignore[attr-defined]

    def window_hit(self, key: str, seconds: int) -> tuple[int, float] | None:
        """Counts one request in `key`'s fixed window of `seconds`, which starts at its first request: the
        count so far in the window, this one included, and the seconds the window has left. One round trip
        (window_hit_send, then its answer). None while Redis does not answer, so that the caller lets the
        request through."""
        return self.window_hit_send(key, seconds).answer()

    def window_hit_send(self, key: str, seconds: int) -> "WindowHit":
        """window_hit in two halves: the count is sent to Redis now (one socket write: EVALSHA, the script's
        text only after Redis answers that it does not know it, as after a restart) and its answer read by
        the WindowHit's `answer`, so that the round trip overlaps whatever the caller does meanwhile (the
        request's database read). It is sent on the thread's connection, which carries nothing else until the
        answer is read (a count sent before and not read yet is read first)."""
        redis_key = self.make_and_validate_key(key)
        milliseconds = seconds * 1000
        window = self._shared.thread_window()
        if window.unread is not None:
            window.unread.answer()
        if self._skipping():
            return WindowHit(self, None, redis_key, milliseconds)
        loop = command_loop()
        if loop is not None:
            # A stream open's count, or any count in the ASGI server, on its event loop's one connection.
            commands = loop_commands(self._servers[0], loop)  # type: ignore[attr-defined]
            future = asyncio.run_coroutine_threadsafe(
                _window_hit_on_loop(commands, redis_key, milliseconds), loop
            )
            hit = window.unread = WindowHit(
                self, _LoopCount(future, self._loop_timeout()), redis_key, milliseconds
            )
            return hit
        try:
            connection = self._window_connection(redis_key)
            connection.send_packed_command(
                [_packed(b"EVALSHA", _WINDOW_HIT_SHA, b"1", redis_key, milliseconds)]
            )
        except redis.RedisError as error:
            self._window_failed(error)
            return WindowHit(self, None, redis_key, milliseconds)
        hit = window.unread = WindowHit(self, connection, redis_key, milliseconds)
        return hit

    async def window_hit_on_loop(self, key: str, seconds: int) -> tuple[int, float] | None:
        """window_hit on the running event loop's one connection (kingscorner.off_loop: an ASGI server's
        stream open counts its request there, beside its database read, and no thread waits for the answer);
        None while Redis does not answer."""
        if self._skipping():
            return None
        redis_key = self.make_and_validate_key(key)
        commands = loop_commands(self._servers[0], asyncio.get_running_loop())  # type: ignore[attr-defined]
        try:
            count, left = await _window_hit_on_loop(commands, redis_key, seconds * 1000)
        except (redis.RedisError, OSError) as error:
            self._failed(error)
            return None
        if self._outage.unavailable_until:
            self._recovered()
        return count, left / 1000

    def _window_connection(self, redis_key: str) -> Any:
        """The connection this thread counts its requests' windows on: one of the pool's, which the thread
        keeps (a request's count is always read before the next is sent, or the connection is closed), so
        that a count costs no trip through the pool, and hands on when it ends (_ThreadWindow: under ASGI
        the next request's thread takes it). Closed after a failure, it connects again when next used."""
        window = self._shared.thread_window()
        if window.connection is None:
            try:
                connection, clean = self._shared.spares.pop()
            except IndexError:
                # Django's client makes a redis.Redis for every call; the rate limit keeps one on the same
                # pool.
                client = self._window_client
                if client is None:
                    client = self._window_client = self._cache.get_client(redis_key, write=True)  # type: ignore[attr-defined]
                connection = client.connection_pool.get_connection()
            else:
                if not clean:
                    # A reply may still come on it: it connects afresh when it sends.
                    connection.disconnect()
            window.connection = connection
        return window.connection

    def _window_failed(self, error: Exception) -> None:
        connection = self._shared.thread_window().connection
        if connection is not None:
            # Its state is unknown (a reply may still come): nothing may read from it again.
            connection.disconnect()
        self._failed(error)

    def _window_answer(self, connection: Any, redis_key: str, milliseconds: int) -> tuple[int, float] | None:
        """The answer to a count window_hit_send sent on `connection`."""
        self._shared.thread_window().unread = None
        try:
            try:
                count, left = connection.read_response()
            except redis.exceptions.NoScriptError:
                connection.send_packed_command(
                    [_packed(b"EVAL", WINDOW_HIT_SCRIPT.encode(), b"1", redis_key, milliseconds)]
                )
                count, left = connection.read_response()
        except redis.RedisError as error:
            self._window_failed(error)
            return None
        if self._outage.unavailable_until:
            self._recovered()
        return int(count), int(left) / 1000

    def window_copy(self, key: str, to: str) -> None:
        """Copies `key`'s window (its count and the time it has left) to `to`, in one atomic call; nothing
        when `key` has no window open or while Redis does not answer."""
        source, target = self.make_and_validate_key(key), self.make_and_validate_key(to)
        client = self._cache.get_client(source, write=True)  # type: ignore[attr-defined]
        self._guarded(lambda: client.eval(WINDOW_COPY_SCRIPT, 2, source, target), None)

    def add(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return self._guarded(partial(super().add, key, value, timeout, version), False)

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        return self._guarded(partial(super().get, key, default, version), default)

    def set(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        self._guarded(partial(super().set, key, value, timeout, version), None)

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return self._guarded(partial(super().touch, key, timeout, version), False)

    def delete(self, key: Any, version: int | None = None) -> bool:
        loop = command_loop()
        if loop is not None:
            # In the ASGI server (a stream open with a new token ends its rotation's replay, games/
            # rotation_replay.py), over its event loop's one connection.
            redis_key = self.make_and_validate_key(key, version=version)
            url = self._servers[0]  # type: ignore[attr-defined]

            def deleted() -> bool:
                future = asyncio.run_coroutine_threadsafe(loop_client(url, loop).delete(redis_key), loop)
                return bool(_loop_result(future, self._loop_timeout()))

            return self._guarded(deleted, False)
        return self._guarded(partial(super().delete, key, version), False)

    def get_many(self, keys: Any, version: int | None = None) -> dict[Any, Any]:
        return self._guarded(partial(super().get_many, keys, version), {})

    def has_key(self, key: Any, version: int | None = None) -> bool:
        return self._guarded(partial(super().has_key, key, version), False)

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        # A counter that cannot be read counts from nothing, as after a miss.
        return self._guarded(partial(super().incr, key, delta, version), delta)

    def set_many(self, data: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> list[Any]:
        # Django's contract: the keys that were not set.
        return self._guarded(partial(super().set_many, data, timeout, version), list(data))

    def delete_many(self, keys: Any, version: int | None = None) -> None:
        self._guarded(partial(super().delete_many, keys, version), None)

    # RedisCache.clear returns whether Redis flushed; django-stubs type BaseCache's, which returns None.
    def clear(self) -> bool:  # type: ignore[override]
        return self._guarded(super().clear, False)  # type: ignore[arg-type]


def _packed(*arguments: bytes | str | int) -> bytes:
    """A command in Redis's protocol (RESP): an array of bulk strings."""
    parts = [b"*%d\r\n" % len(arguments)]
    for argument in arguments:
        data = argument if isinstance(argument, bytes) else str(argument).encode()
        parts += (b"$%d\r\n" % len(data), data, b"\r\n")
    return b"".join(parts)


class WindowHit:
    """A rate-limit window's count sent to Redis (FailOpenRedisCache.window_hit_send), its answer not read
    yet: `answer` reads it once (None while Redis does not answer) and hands the connection back."""

    __slots__ = ("_cache", "_connection", "_key", "_milliseconds", "_answer")

    def __init__(self, cache: FailOpenRedisCache, connection: Any, key: str, milliseconds: int) -> None:
        self._cache = cache
        self._connection = connection
        self._key = key
        self._milliseconds = milliseconds
        self._answer: tuple[int, float] | None = None

    @property
    def answered(self) -> bool:
        return self._connection is None

    def answer(self) -> tuple[int, float] | None:
        connection, self._connection = self._connection, None
        if connection is not None:
            self._answer = self._cache._window_answer(connection, self._key, self._milliseconds)
        return self._answer
