"""The settings: with no environment they run on one machine with no services; browsers on other origins
may call the API."""

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from django.test import Client

from tests.support.stack import ROOT


def test_settings_default_to_one_machine_with_no_services() -> None:
    script = (
        "import json; from django.conf import settings as s; "
        "print(json.dumps([s.DEBUG, s.DATABASES['default']['ENGINE'], s.CACHES['default']['BACKEND'], "
        "s.CELERY_BROKER_URL, s.CELERY_TASK_ALWAYS_EAGER, s.ALLOWED_HOSTS, s.DATA_UPLOAD_MAX_MEMORY_SIZE, "
        "s.DAILY_EPOCH.isoformat(), s.DAILY_OPPONENT_LEVEL, s.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES'], "
        "s.SECRET_KEY.startswith('django-insecure-'), s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS]))"
    )
    env = {"PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "kingscorner.settings"}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == [
        False,
        "django.db.backends.sqlite3",
        "django.core.cache.backends.locmem.LocMemCache",
        "memory://",
        True,
        ["127.0.0.1", "localhost", "[::1]", "testserver"],
        65536,
        "2026-01-01",
        "normal",
        {"anon": "600/min", "user": "1200/min"},
        True,
        False,
        0,
    ]


def _preflight(client: Client, path: str, method: str, headers: str) -> Any:
    """A browser's CORS preflight from another origin for `method` on `path` with `headers`."""
    return client.options(
        path,
        HTTP_ORIGIN="https://cards.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD=method,
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS=headers,
    )


@pytest.mark.django_db
def test_a_browser_on_another_origin_may_call_the_api_with_its_headers(client: Client) -> None:
    preflight = _preflight(
        client, "/api/v1/games", "POST", "authorization, content-type, if-match, idempotency-key"
    )
    assert preflight.status_code == 200
    assert preflight["Access-Control-Allow-Origin"] == "*"
    allowed = preflight["Access-Control-Allow-Headers"].lower()
    for header in ("authorization", "content-type", "if-match", "idempotency-key"):
        assert header in allowed
    # A fetch() stream client resuming sends Last-Event-ID (docs/tables-and-streams.md's example).
    stream = _preflight(client, "/api/v1/players/me/stream", "GET", "authorization, last-event-id")
    assert stream.status_code == 200
    assert {"authorization", "last-event-id"} <= {
        header.strip() for header in stream["Access-Control-Allow-Headers"].lower().split(",")
    }
    response = client.get("/api/v1/health", HTTP_ORIGIN="https://cards.example")
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "ETag" in response["Access-Control-Expose-Headers"]
    refused = client.get("/api/v1/nowhere", HTTP_ORIGIN="https://cards.example")
    assert refused.status_code == 404 and refused["Access-Control-Allow-Origin"] == "*"
