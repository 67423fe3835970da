"""Middleware shared by every URL of the project. Each runs as the server does, synchronously under WSGI and
as a coroutine under ASGI: one synchronous middleware would make Django run the whole chain below it, the
view included, on one thread that the request holds until its view returns, so that under uvicorn every
stream open (kingscorner.asgi serves them outside a thread of their own) would wait for the one before it."""

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.http import HttpRequest, HttpResponse
from django.middleware import clickjacking, common, csrf, security
from django.utils.deprecation import MiddlewareMixin
from whitenoise.middleware import WhiteNoiseMiddleware

from kingscorner.api.errors import body_too_large_response, problem_response

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class _SyncAndAsync:
    """A middleware that runs synchronously or as a coroutine, as the handler it wraps does: `answer` is its
    check before the view (a response, or None to go on), `finish` what it adds to the response."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def answer(self, request: HttpRequest) -> HttpResponse | None:
        return None

    def finish(self, response: HttpResponse) -> HttpResponse:
        return response

    def __call__(self, request: HttpRequest) -> HttpResponse | Awaitable[HttpResponse]:
        if self.is_async:
            return self._acall(request)
        answer = self.answer(request)
        return self.finish(answer if answer is not None else self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        answer = self.answer(request)
        return self.finish(answer if answer is not None else await self.get_response(request))


class ApiVersionMiddleware(_SyncAndAsync):
    """Names the contract's version (API_VERSION) on every response, as `API-Version`."""

    def finish(self, response: HttpResponse) -> HttpResponse:
        response["API-Version"] = settings.API_VERSION
        return response


class BodySizeLimitMiddleware(_SyncAndAsync):
    """Refuses a declared body over MAX_BODY_BYTES with 413 before any view reads it, and a body sent in
    chunks without Content-Length with 411.

    Django checks DATA_UPLOAD_MAX_MEMORY_SIZE only when `request.body` is read, and DRF's parsers read the
    raw stream instead, so without this check an oversized JSON body would be parsed in full. Django reads a
    body only as long as Content-Length says: a chunked body sent straight to gunicorn was read as empty
    (`name: required`). The proxy in front of gunicorn sends every body with its length.
    """

    def answer(self, request: HttpRequest) -> HttpResponse | None:
        encoding = request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
        codings = [coding.strip() for coding in encoding.split(",") if coding.strip()]
        if any(coding != "chunked" for coding in codings):
            # gunicorn refuses a coding other than chunked only without a Content-Length, and then reads the
            # body by its length as if it were not encoded: a body it cannot decode is not read at all.
            return problem_response(
                code="malformed_request",
                detail="A Transfer-Encoding other than chunked cannot be read: send the body as it is.",
            )
        # Only the methods with a body read one; the body of a GET is never read, so it is let through.
        if request.method not in BODY_METHODS:
            return None
        chunked = "chunked" in codings
        if chunked and not request.META.get("CONTENT_LENGTH"):
            return problem_response(
                code="length_required", detail="Send the body with a Content-Length header, not in chunks."
            )
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > settings.MAX_BODY_BYTES:
            return body_too_large_response()
        return None


class StaticFilesMiddleware(WhiteNoiseMiddleware):  # type: ignore[misc]  # whitenoise ships no types
    """WhiteNoise (the admin's and the guides' static files), which is synchronous only, made to run as a
    coroutine under ASGI too: a request for anything else passes straight on, and a static file is read in a
    thread."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any], *args: Any, **kwargs: Any) -> None:
        super().__init__(get_response, *args, **kwargs)
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        return super().__call__(request)

    async def _acall(self, request: HttpRequest) -> Any:
        if self.autorefresh:
            static_file = await sync_to_async(self.find_file)(request.path_info)
        else:
            static_file = self.files.get(request.path_info)
        if static_file is not None:
            return await sync_to_async(self.serve)(static_file, request)
        return await self.get_response(request)


# --- Django's own middleware, without a thread hop for each hook under ASGI --------------------------------

# The key of an ASGI scope that kingscorner.asgi sets on an event stream's request.
EVENT_STREAM_SCOPE = "kingscorner.event_stream"


def _event_stream(request: HttpRequest) -> bool:
    scope = getattr(request, "scope", None)
    return isinstance(scope, dict) and bool(scope.get(EVENT_STREAM_SCOPE))


class _HooksOnTheLoop(MiddlewareMixin):
    """For a Django middleware whose hooks only compute (headers, a redirect's check; no database, no file):
    under ASGI they run on the event loop, where Django's MiddlewareMixin sends each to a thread and back, and
    under a burst of stream opens every one of those hops waits on one thread behind the others'."""

    async def __acall__(self, request: HttpRequest) -> Any:
        process_request = getattr(self, "process_request", None)
        response = process_request(request) if process_request is not None else None
        inner: Any = self.get_response
        response = response or await inner(request)
        process_response = getattr(self, "process_response", None)
        return process_response(request, response) if process_response is not None else response


class _NotForStreams(MiddlewareMixin):
    """For a Django middleware that only the admin's pages need (sessions, CSRF, Django's users, messages):
    an event stream (authenticated by its token or ticket, sending no cookie and taking no form) passes
    straight on, without the middleware's thread hops."""

    async def __acall__(self, request: HttpRequest) -> Any:
        if _event_stream(request):
            inner: Any = self.get_response
            return await inner(request)
        return await super().__acall__(request)


class SecurityMiddleware(_HooksOnTheLoop, security.SecurityMiddleware):
    pass


class CommonMiddleware(_HooksOnTheLoop, common.CommonMiddleware):
    pass


class XFrameOptionsMiddleware(_HooksOnTheLoop, clickjacking.XFrameOptionsMiddleware):
    pass


class SessionMiddleware(_NotForStreams, sessions.SessionMiddleware):
    pass


class CsrfViewMiddleware(_NotForStreams, csrf.CsrfViewMiddleware):
    """Django's CSRF check, whose view hook an event stream skips under ASGI too (Django runs a synchronous
    `process_view` of an async chain on its one thread for such work, one request after another)."""

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        super().__init__(get_response)
        if self.async_mode:  # type: ignore[attr-defined]  # MiddlewareMixin's, which the stubs do not name
            self.process_view = self._process_view_async  # type: ignore[method-assign,assignment]

    async def _process_view_async(
        self, request: HttpRequest, callback: Any, callback_args: Any, callback_kwargs: Any
    ) -> HttpResponse | None:
        if _event_stream(request):
            # An event stream takes no cookie and no form (and DRF's views are exempt).
            return None
        check = sync_to_async(csrf.CsrfViewMiddleware.process_view)
        return await check(self, request, callback, callback_args, callback_kwargs)


class AuthenticationMiddleware(_NotForStreams, auth.AuthenticationMiddleware):
    pass


class MessageMiddleware(_NotForStreams, messages.MessageMiddleware):
    pass
