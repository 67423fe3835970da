"""Tokens on public endpoints: health and registration ignore the Authorization header, every other operation
refuses a token that is not valid, even where a token is optional."""

from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient

from daily import clock

STALE = "Bearer kc_a-token-that-was-replaced"


def _stale_client() -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=STALE)
    return client


@pytest.mark.django_db
def test_health_and_registration_ignore_a_stale_token() -> None:
    client = _stale_client()
    assert client.get("/api/v1/health").status_code == 200
    assert client.post("/api/v1/players", {"name": "Ada"}, format="json").status_code == 201


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/v1/", None),
        ("get", "/api/v1/daily", None),
        ("get", "/api/v1/daily/2026-03-05", None),
        ("get", "/api/v1/daily/2026-03-05/leaderboard", None),
        ("post", "/api/v1/analysis", {"hand": ["QD"]}),
    ],
)
def test_a_stale_token_is_refused_where_a_token_is_optional_and_none_is_welcome(
    method: str, path: str, body: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clock, "now", lambda: datetime(2026, 3, 5, 12, tzinfo=UTC))
    refused = getattr(_stale_client(), method)(path, body, format="json")
    assert (refused.status_code, refused.json()["code"]) == (401, "invalid_token")
    assert refused["WWW-Authenticate"] == 'Bearer realm="api"'
    assert getattr(APIClient(), method)(path, body, format="json").status_code == 200
