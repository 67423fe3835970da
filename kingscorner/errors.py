"""RFC 9457 problem details: the one shape every error of the API takes, for DRF views and Django alike."""

import math
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions
from rest_framework.response import Response

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_BASE = "https://kingscorner.example/problems/"


class ApiProblem(exceptions.APIException):
    """An error a service or view raises to answer with a given status, code and optional extra members."""

    status_code = 400
    default_code = "bad_request"
    default_detail = "The request cannot be served."

    def __init__(
        self,
        *,
        status: int | None = None,
        code: str | None = None,
        detail: str | None = None,
        title: str | None = None,
        extra: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if status is not None:
            self.status_code = status
        self.code = code or self.default_code
        self.title = title or HTTPStatus(self.status_code).phrase
        self.extra = dict(extra or {})
        self.headers = dict(headers or {})
        super().__init__(detail=detail or self.default_detail, code=self.code)


def problem_body(
    *, status: int, code: str, detail: str, title: str | None = None, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "type": PROBLEM_TYPE_BASE + code,
        "title": title or HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "code": code,
        **(extra or {}),
    }


def problem_response(
    *, status: int, code: str, detail: str, extra: Mapping[str, Any] | None = None
) -> JsonResponse:
    """A problem+json response for code outside DRF views: Django's error handlers and middleware."""
    return JsonResponse(
        problem_body(status=status, code=code, detail=detail, extra=extra),
        status=status,
        content_type=PROBLEM_CONTENT_TYPE,
    )


def _validation_errors(detail: Any) -> dict[str, Any]:
    if isinstance(detail, dict):
        return detail
    return {"non_field_errors": detail if isinstance(detail, list) else [detail]}


_CODES: dict[type[exceptions.APIException], str] = {
    exceptions.ParseError: "malformed_json",
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "invalid_token",
    exceptions.PermissionDenied: "forbidden",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "rate_limited",
}


def problem_exception_handler(exc: Exception, context: Mapping[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER. Errors that are not API errors are left to Django, which logs them and
    answers with handler500."""
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):
        exc = ApiProblem(status=413, code="body_too_large", detail=_body_too_large_detail())
    if not isinstance(exc, exceptions.APIException):
        return None

    headers: dict[str, str] = {}
    extra: dict[str, Any] = {}
    title = None
    status = exc.status_code
    detail = exc.detail if isinstance(exc.detail, str) else ""
    if isinstance(exc, ApiProblem):
        code, title, extra, headers = exc.code, exc.title, exc.extra, exc.headers
    elif isinstance(exc, exceptions.ValidationError):
        code, detail = "invalid_request", "The request is not valid; see `errors`."
        extra = {"errors": _validation_errors(exc.detail)}
    else:
        code = next((c for cls, c in _CODES.items() if isinstance(exc, cls)), exc.default_code)
        if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
            # DRF turns 401 into 403 when no authentication class names a challenge; the API always
            # challenges for a bearer token.
            status = 401
            headers["WWW-Authenticate"] = 'Bearer realm="api"'
        elif isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            headers["Retry-After"] = str(math.ceil(exc.wait))
    return Response(
        problem_body(status=status, code=code, detail=detail, title=title, extra=extra),
        status=status,
        headers=headers,
        content_type=PROBLEM_CONTENT_TYPE,
    )


def _body_too_large_detail() -> str:
    return f"The request body is larger than {settings.MAX_BODY_BYTES} bytes."


def body_too_large_response() -> JsonResponse:
    return problem_response(status=413, code="body_too_large", detail=_body_too_large_detail())


def bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    # Django reports a body over DATA_UPLOAD_MAX_MEMORY_SIZE as a bad request; it is a 413.
    if isinstance(exception, RequestDataTooBig):
        return body_too_large_response()
    return problem_response(status=400, code="bad_request", detail="The request cannot be served.")


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return problem_response(status=403, code="forbidden", detail="You may not do this.")


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return problem_response(status=404, code="not_found", detail=f"Nothing is at {request.path}.")


def server_error(request: HttpRequest) -> JsonResponse:
    return problem_response(status=500, code="server_error", detail="The server failed; the error is logged.")
