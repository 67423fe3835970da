"""The caps on open event streams: at most STREAMS_PER_PLAYER a player and STREAMS_PER_ADDRESS a client
address, counted as leases that expire.

Each open stream holds a lease in two sets, its player's and its address's (on Redis, REDIS_URL, so that every
process serving streams counts the same ones; without Redis, in this process). A lease expires
STREAM_LEASE_SECONDS after it was taken or last renewed, and a live stream renews it at least once a
heartbeat, so a process that dies (or a stream whose end was never seen) leaves no phantom slot for longer
than that. Taking a lease is one Lua script that drops the expired leases, checks both caps and adds the new
lease, atomically, so racing opens are counted exactly. A stream over a cap is refused with 429
`too_many_streams`, with Retry-After the seconds until the oldest lease of the full set expires (or sooner, as
streams end). While Redis does not answer, streams are let through, as the rate limits do."""

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import redis
import redis.asyncio
from django.conf import settings

from kingscorner.cache import CommandBatches, client_name, loop_commands
from kingscorner.domain import DomainError

logger = logging.getLogger(__name__)

KEY_PREFIX = "kingscorner:streams:"

# KEYS: the player's set, the address's set. ARGV: now (ms), the lease's lifetime (ms), the lease, the
# player's cap, the address's cap. Answers {0, 0} with the lease added, or {which set is full (1 or 2), the
# milliseconds until its oldest lease expires}.
_TAKE = """
local now = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local caps = {tonumber(ARGV[4]), tonumber(ARGV[5])}
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= caps[i] then
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if #oldest == 0 then
      return {i, ttl}
    end
    return {i, tonumber(oldest[2]) - now}
  end
end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + ttl, ARGV[3])
  redis.call('PEXPIRE', key, ttl)
end
return {0, 0}
"""

# KEYS as above. ARGV: the new expiry (ms), the lease's lifetime (ms), the lease.
_RENEW = """
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[1], ARGV[3])
  redis.call('PEXPIRE', key, ARGV[2])
end
return 1
"""


class TooManyStreams(DomainError):
    code = "too_many_streams"
    retry_after = 1

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


def lease_seconds() -> float:
    """A lease's lifetime: three heartbeats, so a stream may miss two renewals before its slot is freed."""
    return 3 * float(settings.STREAM_HEARTBEAT_SECONDS)


@dataclass
class _LocalSets:
    """The leases of this process, for a server without Redis (the quick start): key -> lease -> expiry."""

    sets: dict[str, dict[str, float]] = field(default_factory=dict)

    def take(self, keys: list[str], lease: str, caps: list[int], now: float, ttl: float) -> tuple[int, float]:
        for index, key in enumerate(keys):
            leases = self.sets.setdefault(key, {})
            for expired in [name for name, expiry in leases.items() if expiry <= now]:
                del leases[expired]
            if len(leases) >= caps[index]:
                return index + 1, min(leases.values(), default=now + ttl) - now
        for key in keys:
            self.sets[key][lease] = now + ttl
        return 0, 0.0

    def renew(self, keys: list[str], lease: str, expiry: float) -> None:
        for key in keys:
            self.sets.setdefault(key, {})[lease] = expiry

    def release(self, keys: list[str], lease: str) -> None:
        for key in keys:
            leases = self.sets.get(key, {})
            leases.pop(lease, None)
            if not leases:
                self.sets.pop(key, None)


_local = _LocalSets()
_clients: dict[tuple[int, str], CommandBatches] = {}
_retry_at = 0.0
RETRY_SECONDS = 5.0


def _client() -> CommandBatches | None:
    """This event loop's Redis commands (None without REDIS_URL, or for a few seconds after Redis failed):
    the loop's one connection for its streams' commands, which sends those that come together in one
    round trip (kingscorner/cache.py)."""
    url = settings.REDIS_URL
    if not url or time.monotonic() < _retry_at:
        return None
    loop = asyncio.get_running_loop()
    return _clients.get((id(loop), url)) or loop_commands(url, loop)


def _failed(error: Exception) -> None:
    global _retry_at
    if time.monotonic() >= _retry_at:
        logger.warning("stream leases: Redis does not answer (%s); streams are not capped meanwhile", error)
    _retry_at = time.monotonic() + RETRY_SECONDS


class StreamLease:
    """One open stream's slot in its player's and its address's counts."""

    def __init__(self, *, player_id: Any, address: str | None) -> None:
        self.keys = [f"{KEY_PREFIX}player:{player_id}"]
        self.caps = [settings.STREAMS_PER_PLAYER]
        if address is not None:
            self.keys.append(f"{KEY_PREFIX}address:{address}")
            self.caps.append(settings.STREAMS_PER_ADDRESS)
        self.lease = uuid.uuid4().hex
        self.renewed_at = 0.0

    async def take(self) -> None:
        """Takes the slot, or raises TooManyStreams."""
        ttl = lease_seconds()
        now = time.time()
        client = _client()
        if client is None and settings.REDIS_URL:
            # Redis failed a moment ago: fail open.
            return
        if client is None:
            full, left = _local.take(self.keys, self.lease, self.caps, now, ttl)
        else:
            try:
                answer = await client.execute(
                    "EVAL",
                    _TAKE,
                    len(self.keys),
                    *self.keys,
                    int(now * 1000),
                    int(ttl * 1000),
                    self.lease,
                    *self.caps,
                )
            except (redis.RedisError, OSError) as error:
                _failed(error)
                return
            full, left = int(answer[0]), float(answer[1]) / 1000
        if full:
            whose = "your player" if full == 1 else "your address"
            raise TooManyStreams(
                f"{self.caps[full - 1]} streams are open for {whose}, the most allowed; close one, or wait.",
                retry_after=max(1, int(left + 0.999)),
            )
        self.renewed_at = time.monotonic()

    async def check(self) -> None:
        """For a stream that ends at once (a WSGI server's): raises TooManyStreams when one more stream would
        not fit, and holds nothing. Its Redis client is its own, for a WSGI server runs each request's
        coroutines in an event loop of their own."""
        url = settings.REDIS_URL
        if not url:
            await self.take()
            await self.release()
            return
        if time.monotonic() < _retry_at:
            return
        client = redis.asyncio.Redis.from_url(
            url, socket_connect_timeout=0.5, socket_timeout=0.5, client_name=client_name()
        )
        _clients[(id(asyncio.get_running_loop()), url)] = CommandBatches(client)
        try:
            await self.take()
            await self.release()
        finally:
            del _clients[(id(asyncio.get_running_loop()), url)]
            await client.aclose()

    async def renew_if_due(self) -> None:
        """Renews the lease when a heartbeat has passed since it was taken or last renewed."""
        if time.monotonic() - self.renewed_at < settings.STREAM_HEARTBEAT_SECONDS:
            return
        self.renewed_at = time.monotonic()
        expiry = time.time() + lease_seconds()
        client = _client()
        if client is None:
            if not settings.REDIS_URL:
                _local.renew(self.keys, self.lease, expiry)
            return
        try:
            await client.execute(
                "EVAL",
                _RENEW,
                len(self.keys),
                *self.keys,
                int(expiry * 1000),
                int(lease_seconds() * 1000),
                self.lease,
            )
        except (redis.RedisError, OSError) as error:
            _failed(error)

    async def release(self) -> None:
        client = _client()
        if client is None:
            if not settings.REDIS_URL:
                _local.release(self.keys, self.lease)
            return
        try:
            await asyncio.gather(*(client.execute("ZREM", key, self.lease) for key in self.keys))
        except (redis.RedisError, OSError) as error:
            _failed(error)
