"""The cache's back-off from a failed Redis (kingscorner/cache.py) is the process's, per location: Django's
cache handler makes a cache object per thread and per async context (an asgiref Local), and under ASGI each
request runs in a context and on a thread of its own (Django's ThreadSensitiveContext), so a back-off kept
on the object was forgotten at every request: under uvicorn every request waited a socket timeout for a hung
Redis and logged its warning. Here each request is run as Django's ASGI handler runs it, and a hung or
refusing Redis is tried at most once per retry interval, and warned of once, however many requests come;
the rate limit's connection of a request's thread is handed on to the next request's when the thread ends."""

import asyncio
import contextvars
import http.client
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
import redis
import redis.connection
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.cache import caches

from kingscorner.cache import FailOpenRedisCache
from tests.support.caches import cache_at
from tests.support.ci import needs_redis
from tests.support.stack import free_port
from tests.support.streams import LiveAsgiServer

T = TypeVar("T")


@dataclass
class HungRedis:
    url: str
    accepted: list[socket.socket]


@pytest.fixture
def hung_redis() -> Iterator[HungRedis]:
    """A TCP server that accepts connections and never answers, as a Redis stopped with SIGSTOP would; it
    counts the connections made to it (a client that timed out closes its connection, so each try of Redis
    is a new one)."""
    listener = socket.create_server(("127.0.0.1", 0))
    hung = HungRedis(f"redis://127.0.0.1:{listener.getsockname()[1]}/0", [])
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            try:
                hung.accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield hung
    stop.set()
    thread.join()
    for connection in [*hung.accepted, listener]:
        connection.close()


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """When each of redis-py's (synchronous) connections tried to reach its server: a refused connection
    leaves no trace on any server."""
    tried: list[float] = []
    connect = redis.connection.Connection._connect

    def counted(self: Any) -> Any:
        tried.append(time.monotonic())
        return connect(self)  # type: ignore[no-untyped-call]

    monkeypatch.setattr(redis.connection.Connection, "_connect", counted)
    return tried


def _as_asgi_request(work: Callable[[], T]) -> T:
    """`work` run as Django's ASGI handler runs a request's synchronous code: in a context of its own, within
    a ThreadSensitiveContext, so on a thread of its own that ends with the request (and `caches` makes the
    request cache objects of its own)."""

    async def request() -> T:
        async with ThreadSensitiveContext():
            return await sync_to_async(work)()

    return contextvars.Context().run(asyncio.run, request())


def _request_using_the_cache() -> tuple[FailOpenRedisCache, float]:
    """What a request does with the cache: its rate limit's count, a read, and (health) a PING; the cache
    object it used and the seconds it took."""
    start = time.monotonic()
    cache = caches["default"]
    assert isinstance(cache, FailOpenRedisCache)
    assert cache.window_hit("ratelimit:anon:192.0.2.1", 60) is None
    assert cache.get("key", "missed") == "missed"
    assert cache.available() is False
    return cache, time.monotonic() - start


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "kingscorner.cache" and "unavailable" in record.getMessage()
    ]


def test_a_hung_redis_is_tried_once_and_warned_of_once_however_many_asgi_requests_come(
    hung_redis: HungRedis, caplog: pytest.LogCaptureFixture
) -> None:
    with cache_at(hung_redis.url), caplog.at_level(logging.WARNING, "kingscorner.cache"):
        served = [_as_asgi_request(_request_using_the_cache) for _ in range(12)]
    # Each request had cache objects of its own, as under uvicorn.
    assert len({id(cache) for cache, _ in served}) == 12
    # The first request tried the hung Redis (one connection); the others left it alone.
    assert len(hung_redis.accepted) == 1
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and "TimeoutError" in warnings[0]


def test_a_refusing_redis_is_tried_once_and_warned_of_once_however_many_asgi_requests_come(
    connects: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    with (
        cache_at(f"redis://127.0.0.1:{free_port()}/0"),
        caplog.at_level(logging.WARNING, "kingscorner.cache"),
    ):
        served = [_as_asgi_request(_request_using_the_cache) for _ in range(12)]
    assert len({id(cache) for cache, _ in served}) == 12
    assert len(connects) == 1
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and "ConnectionError" in warnings[0]


def _interval_over() -> None:
    """As if the default cache's location had failed `retry_interval` ago: its next call may try Redis (no
    waiting for the clock)."""
    cache = caches["default"]
    assert isinstance(cache, FailOpenRedisCache)
    with cache._outage.lock:
        assert cache._outage.unavailable_until
        cache._outage.unavailable_until = time.monotonic() - 1.0


def test_asgi_requests_try_a_hung_redis_once_per_retry_interval(
    hung_redis: HungRedis, caplog: pytest.LogCaptureFixture
) -> None:
    with cache_at(hung_redis.url), caplog.at_level(logging.WARNING, "kingscorner.cache"):
        tries = []
        for _ in range(3):
            for _ in range(5):
                _as_asgi_request(_request_using_the_cache)
            tries.append(len(hung_redis.accepted))
            _interval_over()
    # One try an interval, whatever the requests within it; one warning a minute.
    assert tries == [1, 2, 3]
    assert len(_warnings(caplog)) == 1


def test_concurrent_asgi_requests_after_the_retry_interval_try_a_hung_redis_once(
    hung_redis: HungRedis,
) -> None:
    with cache_at(hung_redis.url):
        _as_asgi_request(_request_using_the_cache)
        assert len(hung_redis.accepted) == 1
        _interval_over()
        # Eight requests at once once the interval is over: one tries Redis, the others leave it alone
        # while that one waits for its answer (the hung Redis's socket timeout, within the next interval).
        start = threading.Barrier(8)
        served: list[object] = []

        def request() -> None:
            start.wait(5)
            served.append(_as_asgi_request(_request_using_the_cache))

        threads = [threading.Thread(target=request) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert len(served) == 8
    assert len(hung_redis.accepted) == 2


def _count_request(key: str) -> Callable[[], tuple[int, float] | None]:
    def count() -> tuple[int, float] | None:
        cache = caches["default"]
        assert isinstance(cache, FailOpenRedisCache)
        return cache.window_hit(key, 60)

    return count


def _checked_out() -> int:
    """How many connections of the default cache's pool are checked out (in use, or kept by a thread)."""
    cache = caches["default"]
    assert isinstance(cache, FailOpenRedisCache)
    pool = cache._cache._get_connection_pool(True)  # type: ignore[attr-defined]
    return len(pool._in_use_connections)


def test_the_rate_limit_connection_of_an_asgi_requests_thread_goes_to_the_next_request() -> None:
    # Outside uvicorn's lifespan (no server loop: `uvicorn --lifespan off`, another ASGI server) a request's
    # count goes over a connection its thread keeps, and each request's thread ends with it: each kept one
    # connection checked out of the pool, and open, for ever (20 requests, 20 connections to Redis).
    needs_redis()
    key = f"ratelimit:anon:{uuid.uuid4().hex}"
    before = _checked_out()
    counts = [_as_asgi_request(_count_request(key)) for _ in range(10)]
    assert [answer[0] if answer else None for answer in counts] == list(range(1, 11))
    assert _checked_out() <= before + 1


def test_a_count_left_unread_by_an_ended_thread_does_not_answer_the_next_requests() -> None:
    needs_redis()
    key = f"ratelimit:anon:{uuid.uuid4().hex}"

    def sent_only() -> None:
        cache = caches["default"]
        assert isinstance(cache, FailOpenRedisCache)
        cache.window_hit_send(key, 60)
        # The count's answer arrives on the connection, and nobody reads it.
        time.sleep(0.1)

    _as_asgi_request(sent_only)
    answer = _as_asgi_request(_count_request(key))
    assert answer is not None and answer[0] == 2
    third = _as_asgi_request(_count_request(key))
    assert third is not None and third[0] == 3


def _post(port: int, path: str, body: str) -> tuple[int, float]:
    start = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
    finally:
        connection.close()
    return response.status, time.monotonic() - start


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.django_db(transaction=True)
def test_uvicorn_serving_requests_waits_for_a_hung_redis_once(hung_redis: HungRedis) -> None:
    # The real thing: kingscorner.asgi under uvicorn, whose requests send their counts over its event loop's
    # connection. Before the fix each of these requests took 0.5 s and logged a warning.
    server = LiveAsgiServer()
    # On the logger itself: kingscorner.asgi sets Django up, which configures the root logger's handlers
    # (pytest's caplog's among them) anew.
    kept = _Kept()
    logger = logging.getLogger("kingscorner.cache")
    logger.addHandler(kept)
    try:
        with cache_at(hung_redis.url):
            server.start()
            try:
                served = [_post(server.port, "/api/v1/analysis", '{"hand": ["QD"]}') for _ in range(12)]
            finally:
                server.stop()
    finally:
        logger.removeHandler(kept)
    assert [status for status, _ in served] == [200] * 12
    assert len(hung_redis.accepted) == 1
    assert len([record for record in kept.records if "unavailable" in record.getMessage()]) == 1


def test_the_back_off_is_per_location(hung_redis: HungRedis) -> None:
    needs_redis()
    with cache_at(hung_redis.url):
        _as_asgi_request(_request_using_the_cache)
    # The machine's Redis, another location, is not left alone for it.
    key = f"ratelimit:anon:{uuid.uuid4().hex}"
    answer = _as_asgi_request(_count_request(key))
    assert answer is not None and answer[0] == 1
    assert _as_asgi_request(lambda: caches["default"].available()) is True  # type: ignore[attr-defined]


def test_redis_answering_again_ends_the_back_off_for_every_request(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    needs_redis()
    monkeypatch.setattr(FailOpenRedisCache, "retry_interval", 0.2)
    # The machine's Redis, failing once as a hung one would (the calls of one request's cache object).
    failing = [True]
    ping = redis.Redis.ping

    def flaky(self: Any, **options: Any) -> Any:
        if failing and failing.pop():
            raise redis.TimeoutError("Timeout reading from socket")
        return ping(self, **options)

    monkeypatch.setattr(redis.Redis, "ping", flaky)
    with caplog.at_level(logging.WARNING, "kingscorner.cache"):
        assert _as_asgi_request(lambda: caches["default"].available()) is False  # type: ignore[attr-defined]
        # Another request's cache object knows of the failure.
        assert _as_asgi_request(lambda: caches["default"].available()) is False  # type: ignore[attr-defined]
        time.sleep(0.25)
        assert _as_asgi_request(lambda: caches["default"].available()) is True  # type: ignore[attr-defined]
        assert _as_asgi_request(lambda: caches["default"].available()) is True  # type: ignore[attr-defined]
    messages = [record.getMessage() for record in caplog.records if record.name == "kingscorner.cache"]
    assert len(messages) == 2
    assert "unavailable" in messages[0] and "answers again" in messages[1]
    assert "1 cache call(s) were answered without it" in messages[1]
