"""An API view whose handlers are coroutines, for responses that outlive the request's checks (an event
stream). DRF's APIView is synchronous: here its checks (content negotiation, authentication, permissions,
rate limits) run as they do for every other operation, in a thread, and a refusal is rendered by the same
exception handler, so the operation is documented and refused like the others."""

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from rest_framework.views import APIView

from kingscorner.off_loop import read_off_loop

T = TypeVar("T")


class AsyncApiView(APIView):
    """An APIView whose handlers are `async def`. Django serves it as an async view (under ASGI on the event
    loop; under WSGI through async_to_sync)."""

    async def dispatch(  # type: ignore[override]
        self, request: HttpRequest, *args: Any, **kwargs: Any
    ) -> HttpResponseBase:
        self.args = args
        self.kwargs = kwargs
        drf_request = self.initialize_request(request, *args, **kwargs)
        self.request = drf_request
        self.headers = self.default_response_headers
        try:
            await self.off_loop(lambda: self.initial(drf_request, *args, **kwargs))
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

    async def off_loop(self, work: Callable[[], T]) -> T:
        """Runs synchronous work of the request (its checks, its reads). Under ASGI on the stream readers'
        threads (kingscorner/off_loop.py), side by side with every other request's: thread-sensitive, it
        would wait on the one thread Django keeps for such work, behind every other stream open of the
        process (an open whose token lookup waits on a lock would hold every other). Under WSGI, and with
        the test client, thread-sensitive, as Django runs a synchronous view: on the request's own thread,
        in the test's transaction."""
        if isinstance(self.request._request, ASGIRequest):
            return await read_off_loop(work)
        return await sync_to_async(work)()
