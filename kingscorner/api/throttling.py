"""The API's rate limits: per bearer token (a player has one at a time), per client address without one, each
a fixed window of the rate's period that starts at the first request counted in it, read at request time.

On Redis (REDIS_URL) a request costs one atomic round trip (kingscorner.cache.FailOpenRedisCache.window_hit:
a Lua script that increments the counter, gives it its expiry if it has none, and answers the count with the
time left), so racing requests are counted exactly; while Redis does not answer, requests are let through.
Without Redis, Django's cache (in-process memory) counts the same windows, for one process.

A request with a bearer token has its token's count sent before the database read that looks the token up,
and its answer read after it (`token_window_begin`), so that the two round trips overlap: the count is one
socket write and one read. The views that look their token up with their game (the moves, GET a game) read
the answer right after their first database statement, their read (`WindowCount.read_after_next_statement`),
and are refused with 429 there, before anything is written, when the token is over its limit. A token no
player has leaves no window: the refusal deletes the count (`invalid_token_counted`) and counts the request
against its address instead."""

import hashlib
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.cache import BaseCache, caches
from django.core.signals import request_finished
from django.db import DEFAULT_DB_ALIAS, connections
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from kingscorner.cache import FailOpenRedisCache, WindowHit
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


def _rate(scope: str) -> Rate | None:
    text = api_settings.DEFAULT_THROTTLE_RATES.get(scope)
    return rate_parse(text) if isinstance(text, str) else None


class WindowCount:
    """One request counted in the window of `scope` and `ident`: on Redis sent now and answered by `over`
    (which reads the answer once), so that the caller can overlap the round trip with its own; elsewhere
    counted at once."""

    __slots__ = ("ident", "_limit", "_hit", "_counted", "_wrapper")

    def __init__(self, scope: str, ident: str, rate: Rate) -> None:
        self.ident = ident
        self._limit = rate.requests
        key = _window_key(scope, ident)
        cache = caches["default"]
        self._hit: WindowHit | None = None
        self._counted: tuple[int, float] | None = None
        self._wrapper: Callable[..., Any] | None = None
        if isinstance(cache, FailOpenRedisCache):
            self._hit = cache.window_hit_send(key, rate.seconds)
        else:
            self._counted = window_hit_local(cache, key, rate)

    @property
    def answered(self) -> bool:
        return self._hit is None or self._hit.answered

    def over(self) -> float | None:
        """None while the window is within the rate (or Redis does not answer: fail open), else the seconds
        it has left."""
        if self._hit is not None:
            self._counted = self._hit.answer()
            self._done()
        if self._counted is None:
            return None
        count, left = self._counted
        return None if count <= self._limit else left

    def read_after_next_statement(self) -> None:
        """Reads the answer when the next database statement of this thread returns (the view's read, which
        the count overlaps), and refuses the request there with 429 `rate_limited` if the window is over its
        rate; before anything else of the request is read or written. A view whose first statement is a
        read asks for this (the views that look their token up with their game)."""
        if self.answered:
            return
        database = connections[DEFAULT_DB_ALIAS]

        def answered_after(
            execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
        ) -> Any:
            try:
                result = execute(sql, params, many, context)
            except BaseException:
                self.over()
                raise
            wait = self.over()
            if wait is not None:
                raise exceptions.Throttled(wait=retry_after(wait))
            return result

        self._wrapper = answered_after
        database.execute_wrappers.append(answered_after)
        _in_flight.count = self

    def _done(self) -> None:
        if self._wrapper is not None:
            wrappers = connections[DEFAULT_DB_ALIAS].execute_wrappers
            if self._wrapper in wrappers:
                wrappers.remove(self._wrapper)
            self._wrapper = None
        if getattr(_in_flight, "count", None) is self:
            _in_flight.count = None


# The count of this thread's request whose answer waits for its next database statement; one its request
# left unread (a request that failed before any statement) is read when the request finishes.
_in_flight = threading.local()


def _in_flight_read(**_: Any) -> None:
    left = getattr(_in_flight, "count", None)
    if left is not None:
        left.over()


request_finished.connect(_in_flight_read, dispatch_uid="kingscorner.api.throttling.in_flight")


def window_over(scope: str, ident: str) -> float | None:
    """Counts one request in the window of `scope` ("user" or "anon") and `ident`: None while it is within
    the rate, else the seconds the window has left."""
    rate = _rate(scope)
    return None if rate is None else WindowCount(scope, ident, rate).over()


# The attribute of a request that holds its token's WindowCount.
_REQUEST_COUNT = "_token_window_count"


def token_window_begin(request: Request, token: str) -> WindowCount | None:
    """Counts the request in its token's window, as RateLimit would, before its token is looked up: on Redis
    the count is sent now and its answer read with WindowCount.over (after the token's lookup) or
    WindowCount.read_after_next_statement; RateLimit then decides from it. None for a view that RateLimit
    does not limit."""
    view = getattr(request, "parser_context", {}).get("view")
    throttles = getattr(view, "throttle_classes", ())
    if not any(isinstance(throttle, type) and issubclass(throttle, RateLimit) for throttle in throttles):
        return None
    rate = _rate("user")
    if rate is None:
        return None
    _in_flight_read()
    count = WindowCount("user", _token_ident(token), rate)
    setattr(request, _REQUEST_COUNT, count)
    return count


def token_window_settled(request: Request) -> float | None:
    """For a view whose count waits for its first database statement, at its response: the count read if no
    statement read it, and, like RateLimit, the seconds to wait when it is over the rate."""
    count: WindowCount | None = getattr(request, _REQUEST_COUNT, None)
    if count is None or count.answered:
        return None
    return count.over()


def retry_after(wait: float) -> float:
    # At least a second: Retry-After is whole seconds, and the window may end within this one.
    return float(max(1, math.ceil(wait)))


def invalid_token_counted(request: Request, token: str) -> float | None:
    """A request whose bearer token no player has counts against its client address's window, as a request
    without a token does, and leaves no window of its own: the token's, which the moves opened before their
    service looked the token up, is deleted. None while the address is within its rate, else the seconds its
    window has left (the request is then refused with 429 rather than 401)."""
    key = _window_key("user", _token_ident(token))
    cache = caches["default"]
    cache.delete(key)
    if not isinstance(cache, FailOpenRedisCache):
        cache.delete(f"{key}:ends")
    address = client_address(request)
    return None if address is None else window_over("anon", address)


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
            count: WindowCount | None = getattr(request, _REQUEST_COUNT, None)
            if count is not None and count.ident == ident:
                # Counted while the token was looked up; a view that reads its answer after its own
                # statement is refused there.
                if not count.answered:
                    return True
                wait = count.over()
            else:
                wait = window_over("user", ident)
        else:
            address = client_address(request)
            if address is None:
                return True
            wait = window_over("anon", address)
        if wait is None:
            return True
        self._wait = wait
        return False

    def wait(self) -> float | None:
        return None if self._wait is None else retry_after(self._wait)
