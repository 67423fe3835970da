"""Gunicorn's settings for the web service, read from the environment (`WEB_CONCURRENCY` sets the workers)."""

import json
import multiprocessing
import os
from http import HTTPStatus
from typing import Any

from gunicorn import util

from kingscorner.access_log import TicketRedactingLogger
from kingscorner.api.problems import PROBLEM_TYPE_BASE, problem

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "20"))
keepalive = 5
accesslog = "-"
# A stream ticket in a URL is written `ticket=[redacted]` (kingscorner/access_log.py).
logger_class = TicketRedactingLogger
errorlog = "-"
# Workers are replaced after a number of requests so that a slow leak cannot grow without bound.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "2000"))
max_requests_jitter = 200


# The registry's code for each status gunicorn refuses a request with before Django (gunicorn 23's
# Worker.handle_error): the response takes the registry's status, so a code has one status everywhere. A
# Transfer-Encoding gunicorn does not implement (its 501) is a request it cannot read, a 400 like the others:
# every refusal is a 4xx. Its 403 comes only from its PROXY-protocol and TLS checks (both off as deployed): a
# request it cannot read, a 400 too. Any other status is its 500 for a failure.
_PROBLEM_CODES: dict[int, str] = {
    400: "malformed_request",
    403: "malformed_request",
    431: "headers_too_large",
    501: "malformed_request",
}


def _write_problem(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """Gunicorn answers a request it cannot read (a request line or header over its limits, a malformed
    request line) itself, before Django, with an HTML page; the API promises problem+json for every
    refusal, with a registered code."""
    code = _PROBLEM_CODES.get(status_int, "server_error")
    entry = problem(code)
    body = json.dumps(
        {
            "type": f"{PROBLEM_TYPE_BASE}{code}",
            "title": entry.title,
            "status": entry.status,
            "detail": mesg or reason,
            "code": code,
        }
    ).encode()
    head = (
        f"HTTP/1.1 {entry.status} {HTTPStatus(entry.status).phrase}\r\nConnection: close\r\n"
        f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


util.write_error = _write_problem


def post_worker_init(worker: Any) -> None:
    """Each worker builds the OpenAPI document before it takes a request, so that no request pays for it."""
    from kingscorner.api.schema import schema_warm

    schema_warm()
