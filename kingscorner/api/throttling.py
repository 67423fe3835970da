"""The API's rate limits: per bearer token (a player has one at a time), per client address without one, each
a fixed window of the rate's period that starts at the first request counted in it, read at request time.

On Redis (REDIS_URL) a request costs one atomic round trip (kingscorner.cache.FailOpenRedisCache.window_hit:
a Lua script that increments the counter, gives it its expiry if it has none, and answers the count with the
time left), so racing requests are counted exactly; while Redis does not answer, requests are let through.
Without Redis, Django's cache (in-process memory) counts the same windows, for one process."""

import hashlib
import math
import time
from dataclasses import dataclass
from typing import Any

from django.core.cache import BaseCache, caches
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from kingscorner.cache import FailOpenRedisCache
from kingscorner.client_address import client_address

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Rate:
    requests: int
    seconds: int


def rate_parse(text: str) -> Rate:
    """DRF's notation: `<requests>/<period>`, the period one of s, sec, m, min, h, hour, d, day (its first
    letter counts)."""
    requests, _, period = text.partition("/")
    return Rate(int(requests), PERIODS[period.strip()[:1]])


def window_hit_local(cache: BaseCache, key: str, rate: Rate) -> tuple[int, float]:
    """The count in `key`'s window after this request and, past the rate's limit, the seconds the window has
    left, from any Django cache: `add` opens a window (and records when it ends), `incr` counts in it.
    In-process memory's calls are each atomic, so the threads of one process are counted exactly."""
    for _ in range(3):
        now = time.time()
        if cache.add(key, 0, rate.seconds):
            cache.set(f"{key}:ends", now + rate.seconds, rate.seconds)
        try:
            count = cache.incr(key)
        except ValueError:
            # The window ended between `add` and `incr`: open the next one.
            continue
        if count <= rate.requests:
            return count, float(rate.seconds)
        ends = cache.get(f"{key}:ends")
        left = float(ends) - now if isinstance(ends, int | float) else float(rate.seconds)
        return count, min(float(rate.seconds), max(0.0, left))
    return 1, float(rate.seconds)


def _token_ident(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _window_key(scope: str, ident: str) -> str:
    return f"ratelimit:{scope}:{ident}"


def rate_window_carry_over(*, previous_token: str, token: str) -> None:
    """After a token rotation: the replaced token's window goes on under the new token, count and end alike,
    so that rotating a token does not open a fresh window (a rotation would otherwise reset the limit)."""
    key, to = _window_key("user", _token_ident(previous_token)), _window_key("user", _token_ident(token))
    cache = caches["default"]
    if isinstance(cache, FailOpenRedisCache):
        cache.window_copy(key, to)
        return
    count, ends = cache.get(key), cache.get(f"{key}:ends")
    if not isinstance(count, int) or not isinstance(ends, int | float):
        return
    left = ends - time.time()
    if left > 0:
        cache.set(to, count, left)
        cache.set(f"{to}:ends", ends, left)


class RateLimit(BaseThrottle):
    """One counter per request: its bearer token's (RATE_LIMIT_USER), else its client address's
    (RATE_LIMIT_ANON, the address as kingscorner.client_address finds it behind NUM_PROXIES). A request past
    the limit is a 429 `rate_limited` with Retry-After, the seconds until its window ends."""

    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        user = request.user
        if getattr(user, "is_authenticated", False):
            # Per token: the views that look their token up with their game (the moves) have no player
            # yet, only the token, and a player has one token at a time.
            token = request.auth
            ident = _token_ident(token) if isinstance(token, str) else str(user.pk)
            scope = "user"
        else:
            address = client_address(request)
            if address is None:
                return True
            scope, ident = "anon", address
        text = api_settings.DEFAULT_THROTTLE_RATES.get(scope)
        if not isinstance(text, str):
            return True
        rate = rate_parse(text)
        key = _window_key(scope, ident)
        cache = caches["default"]
        if isinstance(cache, FailOpenRedisCache):
            counted = cache.window_hit(key, rate.seconds)
            if counted is None:
                # Redis does not answer: fail open.
                return True
            count, left = counted
        else:
            count, left = window_hit_local(cache, key, rate)
        if count <= rate.requests:
            return True
        self._wait = left
        return False

    def wait(self) -> float | None:
        # At least a second: Retry-After is whole seconds, and the window may end within this one.
        return None if self._wait is None else float(max(1, math.ceil(self._wait)))
