"""The stream readers' threads (kingscorner/off_loop.py): they take the work waiting for them by its priority
(a commit's wake-up reads, then stream opens' checks, then the rest), in the order it came within one, and
skip work whose caller has gone away; an event loop gets the outcomes it awaits in one wake-up a batch."""

import asyncio
import threading
import time
from concurrent.futures import Future
from functools import partial
from typing import Any

import pytest

from kingscorner.off_loop import READ_THREADS, Priority, _Readers, executor


def test_readers_take_wake_up_reads_then_opens_then_routine_work_each_in_order() -> None:
    readers = _Readers(1)
    release = threading.Event()
    busy = readers.submit_at(Priority.ROUTINE, release.wait, 10)
    done: list[str] = []
    futures: list[Future[None]] = [
        readers.submit_at(priority, done.append, name)
        for priority, name in (
            (Priority.ROUTINE, "heartbeat 1"),
            (Priority.OPEN, "open 1"),
            (Priority.ROUTINE, "heartbeat 2"),
            (Priority.WOKEN, "woken 1"),
            (Priority.OPEN, "open 2"),
            (Priority.WOKEN, "woken 2"),
        )
    ]
    release.set()
    assert busy.result(10) is True
    for future in futures:
        future.result(10)
    assert done == ["woken 1", "woken 2", "open 1", "open 2", "heartbeat 1", "heartbeat 2"]


def test_readers_skip_work_cancelled_before_they_reach_it_and_pass_on_errors() -> None:
    readers = _Readers(1)
    release = threading.Event()
    readers.submit_at(Priority.ROUTINE, release.wait, 10)
    done: list[str] = []
    cancelled = readers.submit_at(Priority.WOKEN, done.append, "cancelled")
    failing = readers.submit(int, "not a number")
    kept = readers.submit(done.append, "kept")
    assert cancelled.cancel()
    release.set()
    kept.result(10)
    assert done == ["kept"]
    assert isinstance(failing.exception(10), ValueError)


def test_a_games_streams_share_a_log_read_waiting_for_a_reader_but_not_one_begun_before_their_wake_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from games import selectors, streams

    reads: list[int] = []
    reading = threading.Event()
    finish = threading.Event()

    def stream_log(*, game_id: Any, after: int) -> None:
        reads.append(after)
        reading.set()
        finish.wait(10)

    monkeypatch.setattr(selectors, "stream_log", stream_log)
    readers = executor()
    free = threading.Event()

    async def scenario() -> None:
        shared = streams._SharedReads()
        # Every reader thread busy: the first read waits for one.
        busy = [readers.submit_at(Priority.WOKEN, free.wait, 10) for _ in range(READ_THREADS)]
        first = asyncio.ensure_future(shared.read("game", 5, time.monotonic(), Priority.WOKEN))
        await asyncio.sleep(0.01)
        # Woken after the first asked, before any reader began it: the same read.
        second = asyncio.ensure_future(shared.read("game", 5, time.monotonic(), Priority.WOKEN))
        await asyncio.sleep(0.01)
        free.set()
        for each in busy:
            await asyncio.wrap_future(each)
        await asyncio.get_running_loop().run_in_executor(None, reading.wait, 10)
        # Woken after that read began: a read of its own.
        third = asyncio.ensure_future(shared.read("game", 5, time.monotonic(), Priority.WOKEN))
        await asyncio.sleep(0.01)
        finish.set()
        await asyncio.gather(first, second, third)

    asyncio.run(scenario())
    assert reads == [5, 5]


def test_outcomes_awaited_on_a_loop_are_handed_over_in_one_wake_up_a_batch() -> None:
    readers = _Readers(1)
    release = threading.Event()
    readers.submit_at(Priority.ROUTINE, release.wait, 10)
    wake_ups: list[object] = []

    async def scenario() -> list[Any]:
        loop = asyncio.get_running_loop()
        threadsafe = loop.call_soon_threadsafe

        def counted(callback: Any, *args: Any, **kwargs: Any) -> Any:
            wake_ups.append(callback)
            return threadsafe(callback, *args, **kwargs)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign,assignment]
        awaited = [readers.awaitable_at(loop, Priority.OPEN, partial(pow, 2, n)) for n in range(5)]
        failing = readers.awaitable_at(loop, Priority.OPEN, partial(int, "not a number"))
        release.set()
        # The loop busy meanwhile: every outcome is ready before it looks.
        time.sleep(0.3)
        results = list(await asyncio.gather(*awaited))
        with pytest.raises(ValueError):
            await failing
        return results

    assert asyncio.run(scenario()) == [1, 2, 4, 8, 16]
    assert len(wake_ups) == 1


def test_work_awaited_on_a_loop_is_skipped_once_its_caller_went_away() -> None:
    readers = _Readers(1)
    release = threading.Event()
    readers.submit_at(Priority.ROUTINE, release.wait, 10)
    done: list[str] = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        gone = readers.awaitable_at(loop, Priority.WOKEN, partial(done.append, "gone"))
        kept = readers.awaitable_at(loop, Priority.ROUTINE, partial(done.append, "kept"))
        gone.cancel()
        release.set()
        await kept

    asyncio.run(scenario())
    assert done == ["kept"]
