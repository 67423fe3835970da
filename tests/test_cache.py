"""The rate-limit cache fails open: with Redis refusing connections, hung, or stopped, requests are served
within a bound (not a 500, not a 30 s wait), the outage is logged without flooding, `health` says
`degraded`, and the limits count again once Redis answers."""

import logging
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.core.cache import cache, caches
from django.test import override_settings
from rest_framework.test import APIClient

from kingscorner.cache import FailOpenRedisCache
from tests.support.caches import cache_at
from tests.support.ci import IN_CI, needs_redis
from tests.support.stack import free_port
from tests.support.throttling import rates

# Far above the half-second socket timeouts, so that only a hang (the defect: 30 s) can exceed it.
PROMPT_SECONDS = 5.0


@pytest.fixture
def hung_redis() -> Iterator[str]:
    """A TCP server that accepts connections and never answers, as a Redis stopped with SIGSTOP would."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
    stop.set()
    thread.join()
    for connection in [*held, listener]:
        connection.close()


def _timed(call: Any) -> tuple[Any, float]:
    start = time.monotonic()
    result = call()
    return result, time.monotonic() - start


def _assert_served_without_the_cache() -> None:
    client = APIClient()
    created, seconds = _timed(lambda: client.post("/api/v1/players", {"name": "Ada"}, format="json"))
    assert created.status_code == 201, created.content
    assert seconds < PROMPT_SECONDS
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.json()['token']}")
    for _ in range(3):
        me, seconds = _timed(lambda: client.get("/api/v1/players/me"))
        assert me.status_code == 200, me.content
        assert seconds < PROMPT_SECONDS
    health, seconds = _timed(lambda: client.get("/api/v1/health"))
    assert health.status_code == 200
    assert health.json() == {"status": "degraded", "database": "ok", "cache": "unavailable"}
    assert seconds < PROMPT_SECONDS


@pytest.mark.django_db
def test_requests_are_served_promptly_and_health_is_degraded_when_redis_refuses_connections() -> None:
    with cache_at(f"redis://127.0.0.1:{free_port()}/0"):
        _assert_served_without_the_cache()


@pytest.mark.django_db
def test_requests_are_served_promptly_and_health_is_degraded_when_redis_hangs(hung_redis: str) -> None:
    with cache_at(hung_redis):
        _assert_served_without_the_cache()


@pytest.mark.django_db
def test_the_rate_limit_lets_requests_through_while_redis_is_down() -> None:
    with (
        cache_at(f"redis://127.0.0.1:{free_port()}/0"),
        override_settings(REST_FRAMEWORK=rates("1/min", "1/min")),
    ):
        client = APIClient()
        body = {"hand": ["QD"]}
        statuses = [client.post("/api/v1/analysis", body, format="json").status_code for _ in range(3)]
        assert statuses == [200, 200, 200]


def test_a_hung_redis_costs_one_timeout_then_calls_skip_it_until_the_retry_interval(hung_redis: str) -> None:
    with cache_at(hung_redis):
        first, first_seconds = _timed(lambda: cache.get("counter", "missed"))
        assert first == "missed"
        assert first_seconds < PROMPT_SECONDS
        # The socket timeout elapsed once; the next calls do not wait for Redis at all.
        later = [_timed(lambda: cache.get("counter", "missed")) for _ in range(20)]
        assert [value for value, _ in later] == ["missed"] * 20
        assert sum(seconds for _, seconds in later) < first_seconds


def test_every_cache_call_answers_its_miss_value_when_redis_is_down() -> None:
    with cache_at(f"redis://127.0.0.1:{free_port()}/0"):
        assert cache.get("key", 7) == 7
        assert cache.get_many(["a", "b"]) == {}
        assert cache.has_key("key") is False
        assert cache.add("key", 1) is False
        cache.set("key", 1)  # returns None, as its type says
        assert cache.set_many({"a": 1, "b": 2}) == ["a", "b"]
        assert cache.incr("key", 3) == 3
        assert cache.touch("key") is False
        assert cache.delete("key") is False
        cache.delete_many(["a", "b"])  # returns None, as its type says
        down = caches["default"]
        assert isinstance(down, FailOpenRedisCache)
        assert down.clear() is False
        # The rate limit's counter: None, so that the request is let through.
        assert down.window_hit("key", 60) is None


def test_an_outage_is_logged_once_per_interval_not_per_call(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Every call tries Redis and fails, the worst case for the log.
    monkeypatch.setattr(FailOpenRedisCache, "retry_interval", 0.0)
    with (
        cache_at(f"redis://127.0.0.1:{free_port()}/0"),
        caplog.at_level(logging.WARNING, "kingscorner.cache"),
    ):
        for _ in range(50):
            cache.get("key")
    warnings = [record for record in caplog.records if record.name == "kingscorner.cache"]
    assert len(warnings) == 1
    assert "Redis cache unavailable" in warnings[0].getMessage()


@pytest.mark.django_db
def test_health_reports_the_cache_ok_when_redis_answers() -> None:
    needs_redis()
    response = APIClient().get("/api/v1/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "cache": "ok"}


@pytest.mark.django_db
@override_settings(CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}})
def test_health_reports_an_in_process_cache_as_not_configured() -> None:
    response = APIClient().get("/api/v1/health")
    assert response.json() == {"status": "ok", "database": "ok", "cache": "not_configured"}


@pytest.fixture
def own_redis() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A throwaway redis-server on a free port, never the shared one."""
    binary = shutil.which("redis-server")
    if binary is None:
        if IN_CI:
            pytest.fail("CI is set but redis-server is not installed", pytrace=False)
        pytest.skip("needs redis-server")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 30
    while True:
        try:
            redis.Redis.from_url(url, socket_timeout=1).ping()
            break
        except redis.RedisError:
            if time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.05)
    yield process, url
    process.send_signal(signal.SIGCONT)
    process.kill()
    process.wait()


@pytest.mark.django_db
def test_the_rate_limit_counts_again_once_a_stopped_redis_resumes(
    own_redis: tuple[subprocess.Popen[bytes], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    process, url = own_redis
    monkeypatch.setattr(FailOpenRedisCache, "retry_interval", 0.2)
    body = {"hand": ["QD"]}
    with cache_at(url), override_settings(REST_FRAMEWORK=rates("2/min", "100/min")):
        client = APIClient()
        process.send_signal(signal.SIGSTOP)
        during = [_timed(lambda: client.post("/api/v1/analysis", body, format="json")) for _ in range(4)]
        assert [response.status_code for response, _ in during] == [200] * 4
        assert all(seconds < PROMPT_SECONDS for _, seconds in during)
        assert client.get("/api/v1/health").json()["status"] == "degraded"

        process.send_signal(signal.SIGCONT)
        deadline = time.monotonic() + 30
        resumed = caches["default"]
        assert isinstance(resumed, FailOpenRedisCache)
        while not resumed.available():
            assert time.monotonic() < deadline, "the cache did not come back"
            time.sleep(0.1)
        assert client.get("/api/v1/health").json()["status"] == "ok"
        statuses = [client.post("/api/v1/analysis", body, format="json").status_code for _ in range(3)]
        assert statuses == [200, 200, 429]


def test_a_rate_limit_window_has_an_expiry_even_if_its_counter_was_made_without_one() -> None:
    needs_redis()
    cache = caches["default"]
    assert isinstance(cache, FailOpenRedisCache)
    client = cache._cache.get_client(write=True)  # type: ignore[attr-defined]
    key = cache.make_and_validate_key("ratelimit:anon:192.0.2.1")
    client.set(key, 5)
    assert cache.window_hit("ratelimit:anon:192.0.2.1", 60) == (6, 60.0)
    assert 0 < client.pttl(key) <= 60_000
