"""Middleware shared by every URL of the project."""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from kingscorner.api.errors import body_too_large_response, problem_response

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class ApiVersionMiddleware:
    """Names the contract's version (API_VERSION) on every response, as `API-Version`."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response["API-Version"] = settings.API_VERSION
        return response


class BodySizeLimitMiddleware:
    """Refuses a declared body over MAX_BODY_BYTES with 413 before any view reads it, and a body sent in
    chunks without Content-Length with 411.

    Django checks DATA_UPLOAD_MAX_MEMORY_SIZE only when `request.body` is read, and DRF's parsers read the
    raw stream instead, so without this check an oversized JSON body would be parsed in full. Django reads a
    body only as long as Content-Length says: a chunked body sent straight to gunicorn was read as empty
    (`name: required`). The proxy in front of gunicorn sends every body with its length.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Only the methods with a body read one; the body of a GET is never read, so it is let through.
        if request.method not in BODY_METHODS:
            return self.get_response(request)
        chunked = "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
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
        return self.get_response(request)
