"""Wake-up calls for the event streams. When a write to a game commits, the game's channel is told the seq of
its last event: on Redis publish/subscribe (REDIS_URL), so that every process serving streams hears it, or,
without Redis, within this process (the quick start's one server). The message is only a signal: a stream
reads what to send from the event log, so a lost message delays events, never loses one (a stream also reads
the log at each heartbeat, and every stream reads it again when the subscription comes back after an
outage)."""

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from functools import partial
from typing import Any

import redis
import redis.asyncio
from django.conf import settings
from django.db import transaction

from kingscorner.cache import client_name, loop_client
from kingscorner.off_loop import command_loop

logger = logging.getLogger(__name__)

CHANNEL_PREFIX = "kingscorner:game:"
# Each process that serves streams subscribes once, to every game's channel, and hands each message to its
# own streams of that game: one Redis connection and no subscription round trip per stream.
CHANNEL_PATTERN = CHANNEL_PREFIX + "*"
# While Redis does not answer, streams read the log this often instead of waiting for a wake-up.
POLL_SECONDS = 1.0
# How long a stream waits for its process's subscription to be confirmed before it reads the log anyway
# (it then polls until the subscription is up).
SUBSCRIBE_WAIT_SECONDS = 2.0


def channel(game_id: Any) -> str:
    return f"{CHANNEL_PREFIX}{game_id}"


# --- publishing, after a write commits ----------------------------------------------------------------------


def game_changed(*, game_id: Any, event_seq: int) -> None:
    """Tells the game's streams, once the current transaction commits (at once outside one), that its log
    now ends at `event_seq`. Called by the one function that saves every change to a game."""
    transaction.on_commit(partial(publish, str(game_id), event_seq))


# A player's own channel, under the games' prefix so that the one subscription hears it: its message ends
# every stream the player has open, on every process (their token was rotated).
PLAYER_CHANNEL_KEY = "player:"


def player_streams_end(*, player_id: Any) -> None:
    """Ends every open stream of the player, on every process, once the current transaction commits."""
    transaction.on_commit(partial(publish, f"{PLAYER_CHANNEL_KEY}{player_id}", 0))


# A person stream's channel (its player's new person events), and the one that wakes every person stream (a
# daily event, broadcast to everyone: games.services.person_feed), under the same prefix.
PERSON_CHANNEL_KEY = "person:"
BROADCAST_CHANNEL_KEY = "daily"


def person_key(player_id: Any) -> str:
    return f"{PERSON_CHANNEL_KEY}{player_id}"


def person_changed(*, player_id: Any) -> None:
    """Tells the player's person streams, once the current transaction commits, that their feed grew."""
    transaction.on_commit(partial(publish, person_key(player_id), 0))


def broadcast_changed() -> None:
    """Tells every person stream, once the current transaction commits, that a broadcast was added."""
    transaction.on_commit(partial(publish, BROADCAST_CHANNEL_KEY, 0))


def publish(game_id: str, event_seq: int) -> None:
    url = settings.REDIS_URL
    if not url:
        _waiters.wake(game_id)
        return
    loop = command_loop()
    if loop is not None:
        # In the ASGI server (a person stream's read that took daily events into its feed, or any write it
        # serves): over its event loop's one connection, which its streams' commands share.
        asyncio.run_coroutine_threadsafe(_publish_on_loop(loop_client(url, loop), game_id, event_seq), loop)
        return
    _publisher(url).publish(game_id, event_seq)


async def _publish_on_loop(client: Any, game_id: str, event_seq: int) -> None:
    try:
        await client.publish(channel(game_id), event_seq)
    except (redis.RedisError, OSError) as error:
        logger.warning("Redis does not take a stream wake-up (%s: %s)", type(error).__name__, error)


class _RedisPublisher:
    """Publishes on Redis, failing open as the cache does (kingscorner/cache.py): a write that committed must
    not fail because its wake-up cannot be sent, so an error is logged (at most once a `retry_interval`) and
    Redis is left alone for that long. Streams then find the events at their next heartbeat or poll."""

    retry_interval = 5.0

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(
            url, socket_connect_timeout=0.5, socket_timeout=0.5, client_name=client_name()
        )
        self._lock = threading.Lock()
        self._unavailable_until = 0.0
        self._connection: Any = None

    def _send(self, game_id: str, event_seq: int) -> None:
        """PUBLISH on a connection of its own on which Redis sends no replies (`CLIENT REPLY OFF`): the
        request that committed writes the command to the socket and goes on, without waiting a round trip
        for the count of subscribers it would not read. A connection that fails is dropped and made anew."""
        with self._lock:
            if self._connection is None:
                connection: Any = self.client.connection_pool.make_connection()
                connection.connect()
                connection.send_command("CLIENT", "REPLY", "OFF")
                self._connection = connection
            try:
                self._connection.send_command("PUBLISH", channel(game_id), event_seq)
            except BaseException:
                self._connection.disconnect()
                self._connection = None
                raise

    def publish(self, game_id: str, event_seq: int) -> None:
        if time.monotonic() < self._unavailable_until:
            return
        try:
            self._send(game_id, event_seq)
        except redis.RedisError as error:
            with self._lock:
                warn = time.monotonic() >= self._unavailable_until
                self._unavailable_until = time.monotonic() + self.retry_interval
            if warn:
                logger.warning(
                    "Redis does not take stream wake-ups (%s: %s); streams find new events at their next "
                    "heartbeat until it does",
                    type(error).__name__,
                    error,
                )


_publishers: dict[str, _RedisPublisher] = {}
_publishers_lock = threading.Lock()


def _publisher(url: str) -> _RedisPublisher:
    with _publishers_lock:
        if url not in _publishers:
            _publishers[url] = _RedisPublisher(url)
        return _publishers[url]


# --- waiting, in a stream -----------------------------------------------------------------------------------


class Waiter:
    """One stream's wake-up call, made in its event loop; any thread may ring it."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.loop = asyncio.get_running_loop()
        self._event = asyncio.Event()

    def wake(self) -> None:
        self.loop.call_soon_threadsafe(self._event.set)

    async def wait(self, timeout: float) -> bool:
        """Whether a wake-up came (or had come) within `timeout` seconds; it is used up."""
        # asyncio.timeout, not wait_for: Python 3.11's wait_for returns instead of raising when the wake-up
        # comes beside the cancellation of a stream whose client left, and that stream would go on with none.
        try:
            async with asyncio.timeout(max(timeout, 0.0)):
                await self._event.wait()
        except TimeoutError:
            return False
        self._event.clear()
        return True


class _Waiters:
    """Every waiting stream of this process, by game."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_game: dict[str, set[Waiter]] = {}

    def add(self, waiter: Waiter) -> None:
        with self._lock:
            self._by_game.setdefault(waiter.game_id, set()).add(waiter)

    def remove(self, waiter: Waiter) -> None:
        with self._lock:
            waiters = self._by_game.get(waiter.game_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._by_game[waiter.game_id]

    def wake(self, game_id: str) -> None:
        with self._lock:
            if game_id == BROADCAST_CHANNEL_KEY:
                waiters = [
                    waiter
                    for key, group in self._by_game.items()
                    if key.startswith(PERSON_CHANNEL_KEY)
                    for waiter in group
                ]
            else:
                waiters = list(self._by_game.get(game_id, ()))
        for waiter in waiters:
            waiter.wake()

    def wake_all(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            waiters = [waiter for group in self._by_game.values() for waiter in group if waiter.loop is loop]
        for waiter in waiters:
            waiter.wake()

    def count(self) -> int:
        with self._lock:
            return sum(len(group) for group in self._by_game.values())


_waiters = _Waiters()


class _Subscriber:
    """An event loop's one subscription to every game's channel, shared by the loop's streams while any is
    open. It reconnects after an outage, and then wakes every stream, since messages sent meanwhile were
    lost."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.users = 0
        self.loop = asyncio.get_running_loop()
        self.subscribed = asyncio.Event()
        # Set once the first try has an outcome: the subscription, a failure, or a stream that waited
        # SUBSCRIBE_WAIT_SECONDS for it. From then on a stream opens at once, reliable or polling, rather
        # than wait for a Redis that is known to be away (it waited twice, 4 s, at every open).
        self.settled = asyncio.Event()
        self.task = self.loop.create_task(self._run())

    async def _run(self) -> None:
        delay = 0.25
        while True:
            client = redis.asyncio.Redis.from_url(
                self.url, socket_connect_timeout=1.0, client_name=client_name()
            )
            pubsub = client.pubsub()
            try:
                await pubsub.psubscribe(CHANNEL_PATTERN)
                async for message in pubsub.listen():
                    self._received(message)
                    delay = 0.25
            except (redis.RedisError, OSError) as error:
                if self.subscribed.is_set():
                    logger.warning("stream wake-ups lost their Redis subscription (%s); reconnecting", error)
                self.settled.set()
            finally:
                self.subscribed.clear()
                # Streams poll the log until the subscription is back.
                _waiters.wake_all(self.loop)
                with suppress(redis.RedisError, OSError):
                    await pubsub.aclose()
                    await client.aclose()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    def _received(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "psubscribe":
            self.subscribed.set()
            self.settled.set()
            _waiters.wake_all(self.loop)
        elif kind == "pmessage":
            # The message is the game's latest event seq; the streams read the log whatever it says.
            _waiters.wake(message["channel"].decode().removeprefix(CHANNEL_PREFIX))


_subscribers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Subscriber] = weakref.WeakKeyDictionary()


async def _subscriber_acquire(url: str) -> _Subscriber:
    loop = asyncio.get_running_loop()
    subscriber = _subscribers.get(loop)
    if subscriber is None or subscriber.url != url:
        subscriber = _subscribers[loop] = _Subscriber(url)
    subscriber.users += 1
    if not subscriber.settled.is_set():
        # The first streams of a subscription wait for its first outcome (at most SUBSCRIBE_WAIT_SECONDS),
        # so that they start reliable when Redis answers; once Redis has failed, or made a stream wait that
        # long, the next streams open at once and poll until the subscription is back (its confirmation
        # wakes them all).
        try:
            # As in Waiter.wait: a cancellation beside the confirmation must not be lost.
            async with asyncio.timeout(SUBSCRIBE_WAIT_SECONDS):
                await subscriber.settled.wait()
        except TimeoutError:
            subscriber.settled.set()
        except BaseException:
            # A stream cancelled while it waits (its client went away) gives its use back.
            _subscriber_release(subscriber)
            raise
    return subscriber


def _subscriber_release(subscriber: _Subscriber) -> None:
    subscriber.users -= 1
    if subscriber.users == 0:
        if _subscribers.get(subscriber.loop) is subscriber:
            del _subscribers[subscriber.loop]
        subscriber.task.cancel()


class Listener:
    """What a stream waits on: wake-ups for its game, and whether they can be relied on now (false while
    Redis is away: the stream then polls)."""

    def __init__(self, waiter: Waiter, subscriber: _Subscriber | None) -> None:
        self._waiter = waiter
        self._subscriber = subscriber

    @property
    def reliable(self) -> bool:
        return self._subscriber is None or self._subscriber.subscribed.is_set()

    async def wait(self, timeout: float) -> bool:
        return await self._waiter.wait(timeout)


@asynccontextmanager
async def listening(game_id: Any) -> AsyncIterator[Listener]:
    """Wake-ups for the game's changes from now on: enter it before reading the log, so that no change
    between the read and the wait goes unheard."""
    waiter = Waiter(str(game_id))
    _waiters.add(waiter)
    subscriber = None
    try:
        if settings.REDIS_URL:
            subscriber = await _subscriber_acquire(settings.REDIS_URL)
        yield Listener(waiter, subscriber)
    finally:
        _waiters.remove(waiter)
        if subscriber is not None:
            _subscriber_release(subscriber)
