"""A stream opens at once while Redis is known to be away: the first streams of an event loop's subscription
wait for its first outcome (at most SUBSCRIBE_WAIT_SECONDS), so that they start reliable when Redis answers;
once Redis has refused, or has made a stream wait that long (a hung Redis), every later open goes on at once
and polls the log until the subscription is back. Each open waited the whole wait, twice (the player's
channel, then the stream's own): 4 s to a stream's first events while Redis refused connections."""

import asyncio
import socket
from collections.abc import Iterator

import pytest
from django.conf import settings

from games import notifications
from tests.support.ci import needs_redis

# Longer than any test may take: an open that waits for it has waited for a Redis known to be away.
FOREVER = 3600.0
GUARD = 30.0


@pytest.fixture
def refusing_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"


@pytest.fixture
def hung_url() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    try:
        yield f"redis://127.0.0.1:{server.getsockname()[1]}/0"
    finally:
        server.close()


async def _acquired(url: str) -> "notifications._Subscriber":
    return await asyncio.wait_for(notifications._subscriber_acquire(url), GUARD)


def test_while_redis_refuses_the_first_open_waits_for_the_refusal_and_the_next_not_at_all(
    monkeypatch: pytest.MonkeyPatch, refusing_url: str
) -> None:
    monkeypatch.setattr(notifications, "SUBSCRIBE_WAIT_SECONDS", FOREVER)

    async def scenario() -> tuple[bool, bool, bool]:
        first = await _acquired(refusing_url)
        second = await _acquired(refusing_url)
        try:
            return first is second, first.settled.is_set(), first.subscribed.is_set()
        finally:
            notifications._subscriber_release(first)
            notifications._subscriber_release(second)

    # One subscription, its outcome known (Redis refused), not subscribed: the streams poll.
    assert asyncio.run(scenario()) == (True, True, False)


def test_a_hung_redis_makes_the_first_open_wait_its_while_and_the_next_not_at_all(
    monkeypatch: pytest.MonkeyPatch, hung_url: str
) -> None:
    async def scenario() -> tuple[bool, bool]:
        monkeypatch.setattr(notifications, "SUBSCRIBE_WAIT_SECONDS", 0.2)
        first = await _acquired(hung_url)
        monkeypatch.setattr(notifications, "SUBSCRIBE_WAIT_SECONDS", FOREVER)
        second = await _acquired(hung_url)
        try:
            return first.settled.is_set(), first.subscribed.is_set()
        finally:
            notifications._subscriber_release(first)
            notifications._subscriber_release(second)

    assert asyncio.run(scenario()) == (True, False)


def test_with_redis_answering_an_open_starts_subscribed(monkeypatch: pytest.MonkeyPatch) -> None:
    needs_redis()
    monkeypatch.setattr(notifications, "SUBSCRIBE_WAIT_SECONDS", FOREVER)

    async def scenario() -> bool:
        subscriber = await _acquired(settings.REDIS_URL)
        try:
            return subscriber.subscribed.is_set()
        finally:
            notifications._subscriber_release(subscriber)

    assert asyncio.run(scenario())
