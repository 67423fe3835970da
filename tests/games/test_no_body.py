"""The operations that take no body (a seat by invitation, a table's start, leave, rematch, a new invitation,
a seat's replacement, a token's rotation, the stream tickets, a daily attempt) take none or `{}`, and refuse
any other before they change anything: what a client sends to an operation that takes nothing is a mistake
in the client, and a rotation that ran on it would leave the client without a token it knows."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import Game, GameSeat
from tests.support.games import Caller, new_caller
from tests.support.problems import assert_problem
from tests.support.tables import PERSON

pytestmark = pytest.mark.django_db

BODIES: list[tuple[str, str]] = [
    ('{"name": "Evil"}', "application/json"),
    ("[]", "application/json"),
    ("null", "application/json"),
    ('"{}"', "application/json"),
]


def _post(caller: Caller, path: str, raw: str, content_type: str) -> Any:
    return caller.client.post(path, raw, content_type=content_type)


@pytest.mark.parametrize(("raw", "content_type"), BODIES)
def test_a_rotation_sent_a_body_is_refused_and_the_token_still_works(raw: str, content_type: str) -> None:
    ada = new_caller("Ada")
    assert_problem(_post(ada, "/api/v1/players/me/token", raw, content_type), 400, "invalid_request")
    assert ada.get("/api/v1/players/me").status_code == 200


def test_a_rotation_sent_what_is_not_json_is_refused_and_the_token_still_works() -> None:
    ada = new_caller("Ada")
    assert_problem(
        _post(ada, "/api/v1/players/me/token", "garbage{", "application/json"), 400, "malformed_json"
    )
    assert_problem(
        _post(ada, "/api/v1/players/me/token", "hello", "text/plain"), 415, "unsupported_media_type"
    )
    assert ada.get("/api/v1/players/me").status_code == 200


@pytest.mark.parametrize(("raw", "content_type"), BODIES)
def test_a_table_sent_a_body_is_not_joined_started_or_left(raw: str, content_type: str) -> None:
    ada, grace = new_caller("Ada"), new_caller("Grace")
    made = ada.create_game(seats=[PERSON, PERSON, PERSON])
    path = f"/api/v1/games/{made['id']}"
    join = made["invitation"]["join"]
    assert_problem(_post(grace, join, raw, content_type), 400, "invalid_request")
    assert not GameSeat.objects.filter(game_id=made["id"], player_id=grace.player_id).exists()
    assert_problem(_post(ada, f"{path}/start", raw, content_type), 400, "invalid_request")
    assert_problem(_post(ada, f"{path}/leave", raw, content_type), 400, "invalid_request")
    game = Game.objects.get(id=made["id"])
    assert game.status == Game.Status.WAITING and game.version == made["version"]
    assert GameSeat.objects.filter(game=game, player_id=ada.player_id).exists()


@pytest.mark.parametrize("body", [None, {}])
def test_none_or_an_empty_object_is_taken(body: Any) -> None:
    ada = new_caller("Ada")
    rotated = ada.post("/api/v1/players/me/token", body)
    assert rotated.status_code == 200
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {rotated.json()['token']}")
    ticket = client.post(
        "/api/v1/players/me/stream-tickets", "{}" if body == {} else "", content_type="application/json"
    )
    assert ticket.status_code == 201
