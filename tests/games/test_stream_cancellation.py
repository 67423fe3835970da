"""A stream whose client goes away is cancelled by Django's ASGI handler, and must end even when what it waits
for arrives in the same instant: `asyncio.wait_for` of Python 3.11 returns the result instead of raising
when its awaitable completes beside the cancellation, so a stream that waited with it would go on with no
client, holding its waiters (and Django's handler, which waits for it) for the rest of the game."""

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from games import notifications


async def _cancel_beside(task: "asyncio.Future[Any]", complete: Callable[[], None]) -> bool:
    """Completes what `task` waits for and cancels it in the same step of the loop; whether it then ended
    cancelled."""
    await asyncio.sleep(0)  # the task is waiting now
    complete()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        return True
    return False


def test_a_waiting_stream_cancelled_as_its_wake_up_comes_ends() -> None:
    async def scenario() -> bool:
        waiter = notifications.Waiter("cancel-beside-wake")
        task = asyncio.ensure_future(waiter.wait(60))
        return await _cancel_beside(task, waiter._event.set)

    assert asyncio.run(scenario())


def test_a_stream_cancelled_as_the_subscription_is_confirmed_ends_and_gives_its_use_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Subscriber:
        def __init__(self, url: str) -> None:
            self.url = url
            self.users = 0
            self.loop = asyncio.get_running_loop()
            self.subscribed = asyncio.Event()
            self.settled = asyncio.Event()
            self.task = self.loop.create_future()

    monkeypatch.setattr(notifications, "_Subscriber", Subscriber)

    async def scenario() -> tuple[bool, int]:
        task = asyncio.ensure_future(notifications._subscriber_acquire("redis://unused"))
        await asyncio.sleep(0)
        subscriber = notifications._subscribers[asyncio.get_running_loop()]
        ended = await _cancel_beside(task, subscriber.settled.set)
        return ended, subscriber.users

    assert asyncio.run(scenario()) == (True, 0)
