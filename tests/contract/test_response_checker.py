"""The response checker itself (tests/support/openapi.py), which an autouse fixture runs on every response
of the test run: it checks every response of a whole game, and refuses a body or an API header the document
does not describe."""

import json
from typing import Any

import pytest
from openapi_core.validation.response.exceptions import DataValidationError
from rest_framework.response import Response

from tests.support.games import SEED, Caller, new_caller, play_to_the_end
from tests.support.openapi import check_response


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
