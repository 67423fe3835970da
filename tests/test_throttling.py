"""The rate limits (kingscorner/api/throttling.py): per address without a token, per player with one."""

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from tests.support.games import Caller, new_caller
from tests.support.problems import assert_problem
from tests.support.throttling import rates


@pytest.mark.django_db
def test_requests_without_a_token_are_limited_per_address() -> None:
    with override_settings(REST_FRAMEWORK=rates("2/min", "100/min")):
        client = APIClient()
        body = {"hand": ["QD"]}
        assert [client.post("/api/v1/analysis", body, format="json").status_code for _ in range(2)] == [
            200,
            200,
        ]
        limited = client.post("/api/v1/analysis", body, format="json")
        assert_problem(limited, 429, "rate_limited")
        assert int(limited["Retry-After"]) > 0
        other_address = client.post("/api/v1/analysis", body, format="json", REMOTE_ADDR="10.0.0.9")
        assert other_address.status_code == 200


def test_requests_with_a_token_are_limited_per_player(caller: Caller) -> None:
    with override_settings(REST_FRAMEWORK=rates("100/min", "3/min")):
        statuses = [caller.get("/api/v1/players/me").status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        assert new_caller("Eve").get("/api/v1/players/me").status_code == 200
