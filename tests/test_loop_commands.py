"""In the ASGI server, the Redis commands of the process's other threads go over its event loop's one
connection (kingscorner/off_loop.py `command_loop`): the health check's PING, a cache delete, a rate-limit
count. Here a loop on a thread of this process stands for uvicorn's, set as the server's loop as its lifespan
sets it, and this thread sends the commands as a request's thread would. They answer as the thread's own
connection answers, and fail open within a bound when Redis does not answer."""

import asyncio
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.core.cache import caches

from kingscorner import cache as cache_module
from kingscorner.cache import FailOpenRedisCache
from kingscorner.off_loop import command_loop, server_loop_set
from tests.support.ci import needs_redis
from tests.support.stack import free_port


@pytest.fixture
def server_loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server_loop_set(loop)
    try:
        yield loop
    finally:
        server_loop_set(None)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def _redis_cache() -> FailOpenRedisCache:
    needs_redis()
    cache = caches["default"]
    assert isinstance(cache, FailOpenRedisCache)
    return cache


def _loop_clients(loop: asyncio.AbstractEventLoop) -> dict[str, Any]:
    return cache_module._loop_clients.get(loop, {})


def test_commands_of_other_threads_go_over_the_server_loops_connection(
    server_loop: asyncio.AbstractEventLoop,
) -> None:
    cache = _redis_cache()
    assert command_loop() is server_loop
    key = f"loop-commands-{uuid.uuid4().hex}"
    cache.set(key, 1, 60)
    assert cache.available() is True
    assert cache.delete(key) is True
    assert cache.get(key) is None
    assert cache.delete(key) is False
    first = cache.window_hit(f"{key}-window", 60)
    second = cache.window_hit(f"{key}-window", 60)
    assert first is not None and second is not None
    assert (first[0], second[0]) == (1, 2) and 0 < second[1] <= 60
    # One client on the loop, for the cache's server.
    assert list(_loop_clients(server_loop)) == [settings.REDIS_URL]


def test_the_server_loops_commands_fail_open_when_redis_does_not_answer(
    server_loop: asyncio.AbstractEventLoop,
) -> None:
    _redis_cache()
    down = FailOpenRedisCache(f"redis://127.0.0.1:{free_port()}/0", {"OPTIONS": settings.REDIS_CACHE_OPTIONS})
    assert down.available() is False
    assert down.delete("anything") is False
    assert down.window_hit("anything", 60) is None


def test_a_command_whose_answer_does_not_come_in_time_is_a_redis_timeout(
    server_loop: asyncio.AbstractEventLoop,
) -> None:
    import redis

    async def never() -> None:
        await asyncio.sleep(3600)

    future = asyncio.run_coroutine_threadsafe(never(), server_loop)
    with pytest.raises(redis.TimeoutError):
        cache_module._loop_result(future, 0.05)
    assert future.cancelled() or future.done()

    async def refused() -> None:
        raise ConnectionRefusedError("refused")

    with pytest.raises(redis.ConnectionError):
        cache_module._loop_result(asyncio.run_coroutine_threadsafe(refused(), server_loop), 5)


def test_on_the_loops_own_thread_commands_take_no_loop(server_loop: asyncio.AbstractEventLoop) -> None:
    """The loop must not wait on itself: code running on it sends its commands its own way."""

    async def seen() -> asyncio.AbstractEventLoop | None:
        return command_loop()

    assert asyncio.run_coroutine_threadsafe(seen(), server_loop).result(5) is None


def test_a_count_on_the_loop_itself_goes_over_its_connection_and_fails_open(
    server_loop: asyncio.AbstractEventLoop,
) -> None:
    cache = _redis_cache()
    key = f"loop-commands-{uuid.uuid4().hex}"
    down = FailOpenRedisCache(f"redis://127.0.0.1:{free_port()}/0", {"OPTIONS": settings.REDIS_CACHE_OPTIONS})

    async def counts() -> list[tuple[int, float] | None]:
        return [
            await cache.window_hit_on_loop(key, 60),
            await cache.window_hit_on_loop(key, 60),
            await down.window_hit_on_loop(key, 60),
        ]

    first, second, failed = asyncio.run_coroutine_threadsafe(counts(), server_loop).result(10)
    assert first is not None and second is not None
    assert (first[0], second[0]) == (1, 2) and 0 < second[1] <= 60
    assert failed is None
    # The same window as a count sent from another thread.
    third = cache.window_hit(key, 60)
    assert third is not None and third[0] == 3
