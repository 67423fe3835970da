"""An API view whose handlers are coroutines, for responses that outlive the request's checks (an event
stream). DRF's APIView is synchronous: here its checks (content negotiation, authentication, permissions,
rate limits) are made as they are for every other operation, and a refusal is rendered by the same exception
handler, so the operation is documented and refused like the others.

Under ASGI the checks run where they cost least: the authentication's database read, and the view's own
reads before it answers (`open`), in one trip to a stream reader thread (kingscorner/off_loop.py); the rate
limit's count on the event loop's Redis connection, sent before that trip and read after it, so that no
thread waits on the loop for it; everything else on the loop."""

import asyncio
import inspect
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from rest_framework.authentication import get_authorization_header
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from kingscorner.api.throttling import RateLimit, retry_after, window_hit_local
from kingscorner.api.throttling import _rate as rate_of
from kingscorner.api.throttling import _token_ident as token_ident
from kingscorner.api.throttling import _window_key as window_key
from kingscorner.cache import FailOpenRedisCache
from kingscorner.client_address import client_address
from kingscorner.off_loop import Priority, read_off_loop


def _bearer_token(request: Request) -> str | None:
    """The token of `Authorization: Bearer <token>`, when the header is well formed (the authentication
    refuses one that is not)."""
    scheme, _, token = get_authorization_header(request).decode("latin-1").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token and " " not in token else None


# A configuration's cache, by the configuration (kept with it, so that its id is not another's).
_counting_caches: dict[int, tuple[Any, BaseCache]] = {}


def _counting_cache() -> BaseCache:
    """The event loop's rate-limit cache, one a configuration: `caches["default"]` on the loop is made anew
    in each request's context (an asgiref Local), and its look-up was a fifth of a burst of opens' time."""
    config = settings.CACHES["default"]
    kept = _counting_caches.get(id(config))
    if kept is None or kept[0] is not config:
        kept = _counting_caches[id(config)] = (config, caches.create_connection("default"))
    return kept[1]


async def _window_over(scope: str, ident: str) -> float | None:
    """RateLimit's count of one request in the window of `scope` and `ident`, on the event loop: None while
    it is within the rate (or Redis does not answer), else the seconds the window has left."""
    rate = rate_of(scope)
    if rate is None:
        return None
    cache = _counting_cache()
    key = window_key(scope, ident)
    if isinstance(cache, FailOpenRedisCache):
        counted = await cache.window_hit_on_loop(key, rate.seconds)
    else:
        # In-process memory (no Redis): a few dictionary operations.
        counted = window_hit_local(cache, key, rate)
    if counted is None:
        return None
    count, left = counted
    return None if count <= rate.requests else left


@dataclass
class _Counting:
    """A request's count in its bearer token's window, sent before the token is looked up."""

    ident: str
    over: "asyncio.Task[float | None]"


class StreamRateLimit(BaseThrottle):
    """RateLimit, for the operations of an AsyncApiView: the same windows, counts and 429 `rate_limited`.
    Synchronously (under WSGI) it is RateLimit; under ASGI AsyncApiView counts on the event loop instead
    (`over_on_loop`). Not a RateLimit, so that the token's authentication does not count the request on a
    reader thread, waiting there for the loop."""

    def __init__(self) -> None:
        self._limit = RateLimit()
        self._wait: float | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        return self._limit.allow_request(request, view)

    def wait(self) -> float | None:
        return self._limit.wait() if self._wait is None else retry_after(self._wait)

    async def allow_request_on_loop(self, request: Request, counting: _Counting | None) -> bool:
        user = request.user
        if getattr(user, "is_authenticated", False):
            # As RateLimit: per token, or per player for a stream ticket (it carries no token).
            token = request.auth
            ident = token_ident(token) if isinstance(token, str) else str(getattr(user, "pk", ""))
            if counting is not None and counting.ident == ident:
                wait = await counting.over
            else:
                wait = await _window_over("user", ident)
        else:
            address = client_address(request)
            if address is None:
                return True
            wait = await _window_over("anon", address)
        self._wait = wait
        return wait is None


@dataclass
class _Outcome:
    """What a view's `open` returned, or raised (raised when the handler asks for it, after the checks)."""

    value: Any = None
    error: BaseException | None = None

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


class AsyncApiView(APIView):
    """An APIView whose handlers are `async def`. Django serves it as an async view (under ASGI on the event
    loop; under WSGI through async_to_sync). A view's synchronous work before it answers (its input's
    checks, its reads) is its `open`, whose result the handler reads with `opened()`."""

    throttle_classes = (StreamRateLimit,)

    def open(self, request: Request, *args: Any, **kwargs: Any) -> Any:
        """The handler's synchronous work before it answers, after the checks; its errors are refusals."""
        return None

    def opened(self) -> Any:
        """What `open` returned (or the error it raised, raised now)."""
        outcome: _Outcome = self._opened
        return outcome.result()

    async def dispatch(  # type: ignore[override]
        self, request: HttpRequest, *args: Any, **kwargs: Any
    ) -> HttpResponseBase:
        self.args = args
        self.kwargs = kwargs
        drf_request = self.initialize_request(request, *args, **kwargs)
        self.request = drf_request
        self.headers = self.default_response_headers
        try:
            if isinstance(request, ASGIRequest):
                await self._initial_on_loop(drf_request, *args, **kwargs)
            else:
                # Under WSGI, and with the test client, thread-sensitive, as Django runs a synchronous view:
                # on the request's own thread, in the test's transaction.
                await sync_to_async(self._initial_and_open)(drf_request, *args, **kwargs)
            method = (drf_request.method or "").lower()
            handler = getattr(self, method, None) if method in self.http_method_names else None
            if handler is None:
                handler = self.http_method_not_allowed
            response = handler(drf_request, *args, **kwargs)
            if inspect.isawaitable(response):
                response = await response
        except Exception as exc:
            response = self.handle_exception(exc)
        self.response = self.finalize_response(drf_request, response, *args, **kwargs)
        return self.response

    def _open(self, request: Request, *args: Any, **kwargs: Any) -> None:
        try:
            self._opened = _Outcome(value=self.open(request, *args, **kwargs))
        except Exception as error:
            self._opened = _Outcome(error=error)

    def _initial_and_open(self, request: Request, *args: Any, **kwargs: Any) -> None:
        self.initial(request, *args, **kwargs)
        self._open(request, *args, **kwargs)

    async def _initial_on_loop(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """APIView.initial's checks, in its order (authentication, permissions, rate limits, then the view's
        own), with the authentication and `open` on a reader thread in one trip, and the bearer token's
        count in its window sent to Redis before it."""
        self.format_kwarg = self.get_format_suffix(**kwargs)
        request.accepted_renderer, request.accepted_media_type = self.perform_content_negotiation(request)
        request.version, request.versioning_scheme = self.determine_version(request, *args, **kwargs)
        counting = None
        token = _bearer_token(request)
        if token is not None and "ticket" not in request.query_params:
            ident = token_ident(token)
            counting = _Counting(ident, asyncio.ensure_future(_window_over("user", ident)))
        try:

            def checks() -> None:
                self.perform_authentication(request)
                self.check_permissions(request)
                self._open(request, *args, **kwargs)

            await read_off_loop(checks, Priority.OPEN)
            for throttle in self.get_throttles():
                if isinstance(throttle, StreamRateLimit):
                    allowed = await throttle.allow_request_on_loop(request, counting)
                else:
                    allowed = throttle.allow_request(request, self)
                if not allowed:
                    self.throttled(request, throttle.wait())  # type: ignore[arg-type]  # DRF's is Optional
        finally:
            if counting is not None and not counting.over.done():
                # Refused before its count was read (its token is not valid): the count goes on, unread.
                counting.over.add_done_callback(lambda task: task.cancelled() or task.exception())
