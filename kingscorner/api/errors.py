"""RFC 9457 problem details: the one shape every error of the API takes, for DRF views and Django alike.
Each error's status, title and meaning come from the registry of problem codes (kingscorner.api.problems)."""

import logging
import math
import sys
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions
from rest_framework.response import Response

from kingscorner.api.problems import PROBLEM_TYPE_BASE as PROBLEM_TYPE_BASE
from kingscorner.api.problems import problem
from kingscorner.api.throttling import invalid_token_counted
from kingscorner.domain import DomainError, refusal_of

PROBLEM_CONTENT_TYPE = "application/problem+json"
BEARER_CHALLENGE = 'Bearer realm="api"'

logger = logging.getLogger(__name__)

# SQLSTATE classes of a database that cannot serve anyone now: connection exceptions (08), insufficient
# resources such as too many connections (53), a server shutting down or starting up (57P01-57P03), and a
# statement it cancelled at DATABASE_STATEMENT_TIMEOUT (57014: the API cancels nothing else), for a database
# that does not answer in time does not answer (kingscorner/database.py).
_UNAVAILABLE_SQLSTATES = ("08", "53", "57P01", "57P02", "57P03", "57014")


def problem_body(*, code: str, detail: str, members: Mapping[str, Any] | None = None) -> dict[str, Any]:
    entry = problem(code)
    return {
        "type": PROBLEM_TYPE_BASE + code,
        "title": entry.title,
        "status": entry.status,
        "detail": detail,
        "code": code,
        **(members or {}),
    }


def problem_response(*, code: str, detail: str) -> JsonResponse:
    """A problem+json response for code outside DRF views: Django's error handlers and middleware."""
    return JsonResponse(
        problem_body(code=code, detail=detail), status=problem(code).status, content_type=PROBLEM_CONTENT_TYPE
    )


def _validation_errors(detail: Any) -> dict[str, Any]:
    if isinstance(detail, dict):
        return detail
    return {"non_field_errors": detail if isinstance(detail, list) else [detail]}


# DRF's own exceptions, by the code each answers with.
DRF_CODES: dict[type[exceptions.APIException], str] = {
    exceptions.ParseError: "malformed_json",
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "invalid_token",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "rate_limited",
}


def database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the database cannot be reached (down, restarting, refusing connections), as
    opposed to a query that failed, which is a bug. A connection that cannot be made or was lost has no
    SQLSTATE (psycopg and sqlite3 alike); a server-side refusal is told by its SQLSTATE class."""
    if isinstance(exc, InterfaceError):
        return True
    if not isinstance(exc, OperationalError):
        return False
    sqlstate = getattr(exc.__cause__, "sqlstate", None)
    return sqlstate is None or sqlstate.startswith(_UNAVAILABLE_SQLSTATES)


DATABASE_UNAVAILABLE_DETAIL = "The database does not answer; try again in a few seconds."


def _retry_after_database() -> dict[str, str]:
    return {"Retry-After": str(settings.DATABASE_RETRY_AFTER)}


def _problem_of(exc: Exception) -> tuple[str, str, dict[str, Any], dict[str, str]] | None:
    """The code, detail, extra members and headers an error is answered with; None for an error that is
    not the client's (a bug), which Django logs and answers with handler500."""
    if isinstance(exc, DomainError):
        domain_headers = exc.headers
        if exc.code == "database_unavailable":
            domain_headers = _retry_after_database()
        retry_after = getattr(exc, "retry_after", None)
        if isinstance(retry_after, int):
            domain_headers = {"Retry-After": str(retry_after)}
        if problem(exc.code).status == 401:
            domain_headers = {"WWW-Authenticate": BEARER_CHALLENGE}
        return exc.code, exc.detail, exc.members, domain_headers
    if database_unavailable(exc):
        logger.warning("database unavailable: %s", exc)
        return "database_unavailable", DATABASE_UNAVAILABLE_DETAIL, {}, _retry_after_database()
    refusal = refusal_of(exc)
    if refusal is not None:
        return refusal.code, refusal.detail, {}, {}
    if isinstance(exc, Http404):
        return "not_found", "Nothing is here.", {}, {}
    if isinstance(exc, RequestDataTooBig):
        return "body_too_large", _body_too_large_detail(), {}, {}
    if isinstance(exc, exceptions.ValidationError):
        errors = {"errors": _validation_errors(exc.detail)}
        return "invalid_request", "The request is not valid; see `errors`.", errors, {}
    code = next((code for cls, code in DRF_CODES.items() if isinstance(exc, cls)), None)
    if code is None or not isinstance(exc, exceptions.APIException):
        return None
    detail = exc.detail if isinstance(exc.detail, str) else ""
    headers: dict[str, str] = {}
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        # DRF turns 401 into 403 when no authentication class names a challenge; the API always
        # challenges for a bearer token.
        headers["WWW-Authenticate"] = BEARER_CHALLENGE
    elif isinstance(exc, exceptions.Throttled):
        wait: float | None = getattr(exc, "wait", None)
        if wait is not None:
            headers["Retry-After"] = str(max(1, math.ceil(wait)))
    return code, detail, {}, headers


def problem_exception_handler(exc: Exception, context: Mapping[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER."""
    found = _problem_of(exc)
    if found is None:
        return None
    code, detail, members, headers = found
    if code == "invalid_token":
        wait = _invalid_token_throttled(context.get("request"))
        if wait is not None:
            code, detail, members = (
                "rate_limited",
                f"Request was throttled. Expected available in {wait} seconds.",
                {},
            )
            headers = {"Retry-After": str(wait)}
    return Response(
        problem_body(code=code, detail=detail, members=members),
        status=problem(code).status,
        headers=headers,
        content_type=PROBLEM_CONTENT_TYPE,
    )


def _invalid_token_throttled(request: Any) -> int | None:
    """A token no player has counts against its client address's rate limit (and leaves no count of its own):
    the seconds to wait once the address is over its limit, else None."""
    if request is None:
        return None
    scheme, _, token = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    wait = invalid_token_counted(request, token.strip())
    return None if wait is None else max(1, math.ceil(wait))


def _body_too_large_detail() -> str:
    return f"The request body is larger than {settings.MAX_BODY_BYTES} bytes."


def body_too_large_response() -> JsonResponse:
    return problem_response(code="body_too_large", detail=_body_too_large_detail())


def bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    # Django reports a body over DATA_UPLOAD_MAX_MEMORY_SIZE as a bad request; it is a 413.
    if isinstance(exception, RequestDataTooBig):
        return body_too_large_response()
    # Django answers a Host that ALLOWED_HOSTS does not name, or a request it cannot otherwise read, here.
    return problem_response(code="malformed_request", detail="The request cannot be served.")


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return problem_response(code="not_found", detail=f"Nothing is at {request.path}.")


def server_error(request: HttpRequest) -> JsonResponse:
    # Django calls this while handling the exception that escaped a view or a middleware: one that says
    # the database is unreachable (from the admin, or from middleware before any API view) is a 503 too.
    exc = sys.exc_info()[1]
    if exc is not None and database_unavailable(exc):
        response = problem_response(code="database_unavailable", detail=DATABASE_UNAVAILABLE_DETAIL)
        response["Retry-After"] = str(settings.DATABASE_RETRY_AFTER)
        return response
    return problem_response(code="server_error", detail="The server failed; the error is logged.")
