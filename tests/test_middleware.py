"""The body limits Django's middleware applies before any view (kingscorner/middleware.py): a body over
MAX_BODY_BYTES is a 413; a body sent in chunks straight to gunicorn (no proxy in front), which gunicorn passes
on without Content-Length and Django would read as empty, is refused with 411 `length_required` instead."""

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from tests.support.problems import assert_problem
from tests.support.stack import ROOT, free_port


@pytest.fixture
def gunicorn(tmp_path: Path) -> Iterator[int]:
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "kingscorner.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "kingscorner/gunicorn_conf.py", "kingscorner.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("gunicorn did not start") from None
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_chunked_body_sent_to_gunicorn_directly_is_a_411_problem_not_read_as_empty(gunicorn: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", gunicorn, timeout=60)
    chunks = iter([b'{"name": ', b'"Ada"}'])
    connection.request(
        "POST",
        "/api/v1/players",
        body=chunks,
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
        encode_chunked=True,
    )
    response = connection.getresponse()
    assert (response.status, response.getheader("Content-Type")) == (411, "application/problem+json")
    assert b'"code": "length_required"' in response.read()


def test_a_chunked_post_is_refused_before_any_view(client: Client) -> None:
    response = client.generic(
        "POST", "/api/v1/players", b"", content_type="application/json", HTTP_TRANSFER_ENCODING="chunked"
    )
    assert (response.status_code, response.json()["code"]) == (411, "length_required")


def test_body_over_the_limit_is_a_413_problem_before_any_view(client: Client) -> None:
    body = json.dumps({"padding": "x" * 70_000})
    response = client.post("/api/v1/health", body, content_type="application/json")
    assert_problem(response, status=413, code="body_too_large")


@pytest.mark.parametrize("kind", ["too large", "chunked"])
def test_the_body_refusals_carry_the_security_and_cors_headers_of_every_answer(
    client: Client, kind: str
) -> None:
    """413 and 411 come before any view, but after the middleware that adds the headers every answer has."""
    origin = {"Origin": "https://client.example"}
    if kind == "chunked":
        response = client.generic(
            "POST",
            "/api/v1/players",
            b"",
            content_type="application/json",
            headers={**origin, "Transfer-Encoding": "chunked"},
        )
    else:
        body = json.dumps({"name": "x" * 70_000})
        response = client.post("/api/v1/players", body, content_type="application/json", headers=origin)
    assert response.status_code in (411, 413)
    for header in (
        "X-Content-Type-Options",
        "X-Frame-Options",
        "Referrer-Policy",
        "Cross-Origin-Opener-Policy",
        "API-Version",
        "Access-Control-Allow-Origin",
    ):
        assert response.has_header(header), (header, dict(response.headers))


@pytest.mark.django_db
def test_under_asgi_the_admins_forms_are_still_checked_for_their_csrf_token() -> None:
    import asyncio

    from django.test import AsyncClient

    async def posts() -> tuple[int, int]:
        client = AsyncClient(enforce_csrf_checks=True)
        refused = await client.post("/admin/login/", {"username": "nobody", "password": "wrong"})
        page = await client.get("/admin/login/")
        token = page.cookies["csrftoken"].value
        checked = await client.post("/admin/login/", {"username": "", "csrfmiddlewaretoken": token})
        return refused.status_code, checked.status_code

    refused, checked = asyncio.run(posts())
    assert refused == 403
    # Past the check: the login form answers an empty form itself.
    assert checked == 200


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "compress", "gzip, chunked", "identity"])
def test_a_transfer_encoding_other_than_chunked_is_a_malformed_request(client: Client, encoding: str) -> None:
    """gunicorn reads such a body by its Content-Length as if it were not encoded; the API refuses it, as its
    error table says, whatever the method."""
    for method in ("POST", "GET"):
        response = client.generic(
            method,
            "/api/v1/players",
            b"{}",
            content_type="application/json",
            headers={"Transfer-Encoding": encoding},
        )
        assert_problem(response, status=400, code="malformed_request")
