"""Tokens on public endpoints, created resources and the response checker itself: health and registration
ignore the Authorization header, every other operation refuses a token that is not valid, each created
resource answers 201 with its Location, and a response the document does not describe is refused."""

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from openapi_core.validation.response.exceptions import DataValidationError
from rest_framework.response import Response
from rest_framework.test import APIClient

from daily import clock
from tests.support.games import SEED, Caller, new_caller, play_to_the_end
from tests.support.openapi import check_response

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


def test_created_resources_answer_201_with_their_location(
    caller: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clock, "now", lambda: datetime(2026, 3, 5, 12, tzinfo=UTC))
    player = APIClient().post("/api/v1/players", {"name": "Eve"}, format="json")
    assert player.status_code == 201 and player["Location"] == "http://testserver/api/v1/players/me"
    game = caller.post("/api/v1/games", {})
    assert (
        game.status_code == 201 and game["Location"] == f"http://testserver/api/v1/games/{game.json()['id']}"
    )
    attempt = caller.post("/api/v1/daily/2026-03-05/attempts")
    game_id = attempt.json()["game"]["id"]
    assert attempt.status_code == 201 and attempt["Location"] == f"http://testserver/api/v1/games/{game_id}"
    assert caller.get(attempt["Location"]).json()["id"] == game_id


def test_every_response_of_a_whole_game_is_of_a_documented_operation_and_checked(
    caller: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    responses: list[Response] = []
    post = caller.client.post

    def recorded(*args: Any, **kwargs: Any) -> Response:
        response: Response = post(*args, **kwargs)
        responses.append(response)
        return response

    monkeypatch.setattr(caller.client, "post", recorded)
    play_to_the_end(caller, caller.create_game(seed=SEED, opponents=1, target_score=60))
    assert len(responses) > 5 and all(check_response(response) for response in responses)


def test_a_body_the_document_does_not_describe_is_refused(caller: Caller) -> None:
    response = caller.get("/api/v1/players/me")
    response.content = json.dumps({"id": caller.player_id}).encode()
    with pytest.raises(DataValidationError):
        check_response(response)


def test_an_undocumented_api_header_is_refused(caller: Caller) -> None:
    response = caller.get("/api/v1/players/me")
    response["Location"] = "http://testserver/api/v1/players/me"
    with pytest.raises(AssertionError):
        check_response(response)


def test_a_response_of_no_documented_operation_is_not_checked(caller: Caller) -> None:
    assert check_response(new_caller("Eve").client.delete("/api/v1/players/me")) is False
