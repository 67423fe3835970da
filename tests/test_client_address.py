"""The address a request is counted against: the connecting one, or behind NUM_PROXIES proxies the one the
outermost proxy saw, so that a client cannot escape the rate limit by forging X-Forwarded-For."""

from typing import Any

import pytest
from django.conf import settings
from django.test import RequestFactory, override_settings
from rest_framework.test import APIClient

from kingscorner.client_address import client_address

BODY = {"hand": ["QD"]}


def _settings(num_proxies: int, anon: str = "600/min") -> dict[str, Any]:
    return {
        **settings.REST_FRAMEWORK,
        "NUM_PROXIES": num_proxies,
        "DEFAULT_THROTTLE_RATES": {"anon": anon, "user": "1200/min"},
    }


@pytest.mark.parametrize(
    ("num_proxies", "forwarded_for", "expected"),
    [
        (0, "198.51.100.7", "10.0.0.2"),
        (1, "198.51.100.7", "198.51.100.7"),
        (1, "192.0.2.1, 198.51.100.7", "198.51.100.7"),
        (2, "192.0.2.1, 198.51.100.7", "192.0.2.1"),
    ],
)
def test_the_client_address_is_read_from_the_right_of_x_forwarded_for(
    num_proxies: int, forwarded_for: str, expected: str
) -> None:
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded_for)
    with override_settings(REST_FRAMEWORK=_settings(num_proxies)):
        assert client_address(request) == expected


@pytest.mark.django_db
def test_behind_one_proxy_a_forged_forwarded_address_does_not_escape_the_rate_limit() -> None:
    client = APIClient()
    proxy: dict[str, Any] = {"REMOTE_ADDR": "10.0.0.2"}
    with override_settings(REST_FRAMEWORK=_settings(1, anon="2/min")):
        statuses = [
            client.post(
                "/api/v1/analysis",
                BODY,
                format="json",
                HTTP_X_FORWARDED_FOR=f"192.0.2.{n}, 203.0.113.5",
                **proxy,
            ).status_code
            for n in range(3)
        ]
        assert statuses == [200, 200, 429]
        other = client.post(
            "/api/v1/analysis", BODY, format="json", HTTP_X_FORWARDED_FOR="198.51.100.7", **proxy
        )
        assert other.status_code == 200
