"""Gunicorn's settings for the web service, read from the environment (`WEB_CONCURRENCY` sets the workers)."""

import json
import multiprocessing
import os
from typing import Any

from gunicorn import util

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "20"))
keepalive = 5
accesslog = "-"
errorlog = "-"
# Workers are replaced after a number of requests so that a slow leak cannot grow without bound.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "2000"))
max_requests_jitter = 200


_PROBLEM_CODES = {
    400: "malformed_request",
    403: "forbidden",
    431: "headers_too_large",
    501: "not_implemented",
}


def _write_problem(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """Gunicorn answers a request it cannot read (a request line or header over its limits, a malformed
    request line) itself, before Django, with an HTML page; the API promises problem+json for every
    refusal."""
    code = _PROBLEM_CODES.get(status_int, "server_error")
    body = json.dumps(
        {
            "type": f"https://kingscorner.example/problems/{code}",
            "title": reason,
            "status": status_int,
            "detail": mesg or reason,
            "code": code,
        }
    ).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


util.write_error = _write_problem
