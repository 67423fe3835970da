"""An API view whose handlers are coroutines, for responses that outlive the request's checks (an event
stream). DRF's APIView is synchronous: here its checks (content negotiation, authentication, permissions,
rate limits) run as they do for every other operation, through sync_to_async, and a refusal is rendered by
the same exception handler, so the operation is documented and refused like the others."""

import inspect
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from rest_framework.views import APIView


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
            # Thread-sensitive, as Django runs a synchronous view: under WSGI, and in tests, on the
            # request's own thread and database connection.
            await sync_to_async(self.initial)(drf_request, *args, **kwargs)
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
