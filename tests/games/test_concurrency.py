"""Moves raced at one version from real threads on PostgreSQL: the versioned write lets exactly one apply."""

import json
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import Game, GameMove, Player
from games.tokens import token_hash
from tests.support.games import SEED, new_caller
from tests.support.races import race, split

RACERS = 8


def _race(token: str, racers: int, send: Callable[[APIClient], Any]) -> list[Any]:
    """Runs `send` from `racers` threads released at once, each with its own client; returns what each got
    back."""

    def racer() -> Any:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return send(client)

    responses, errors = split(race(racers, racer))
    assert errors == []
    return responses


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_eight_moves_raced_at_one_version_apply_exactly_once() -> None:
    caller = new_caller()
    view = caller.create_game(seed=SEED)
    responses = _race(
        caller.token,
        RACERS,
        lambda client: client.post(
            f"/api/v1/games/{view['id']}/moves",
            {"moves": [{"type": "end_turn"}], "expected_version": view["version"]},
            format="json",
        ),
    )
    assert sorted(response.status_code for response in responses) == [200] + [409] * (RACERS - 1)
    game = Game.objects.get(id=view["id"])
    assert game.version == 2 and GameMove.objects.filter(game=game, seat=0).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_retries_raced_with_one_idempotency_key_apply_once_and_answer_alike() -> None:
    caller = new_caller()
    view = caller.create_game(seed=SEED)
    responses = _race(
        caller.token,
        4,
        lambda client: client.post(
            f"/api/v1/games/{view['id']}/moves",
            {"moves": [{"type": "end_turn"}]},
            format="json",
            HTTP_IDEMPOTENCY_KEY="same",
        ),
    )
    bodies = [(response.status_code, response.content) for response in responses]
    assert {status for status, _ in bodies} == {200}
    assert all(json.loads(body) == json.loads(bodies[0][1]) for _, body in bodies)
    assert Game.objects.get(id=view["id"]).version == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_eight_token_rotations_raced_with_one_token_give_exactly_one_new_token() -> None:
    caller = new_caller()
    responses = _race(caller.token, RACERS, lambda client: client.post("/api/v1/players/me/token"))
    assert sorted(response.status_code for response in responses) == [200] + [409] * (RACERS - 1)
    [winner] = [response.json()["token"] for response in responses if response.status_code == 200]
    assert {response.json()["code"] for response in responses if response.status_code == 409} == {
        "token_rotated"
    }
    assert Player.objects.get(id=caller.player_id).token_hash == token_hash(winner)
    me = APIClient().get("/api/v1/players/me", HTTP_AUTHORIZATION=f"Bearer {winner}")
    assert me.status_code == 200


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_token_rotations_raced_with_one_idempotency_key_all_answer_the_one_new_token() -> None:
    """Retries of one rotation sent while it is under way (a client retrying on a timeout) get its new token,
    as a retry sent after it does; they were refused with 409 token_rotated or 401 invalid_token."""
    caller = new_caller()
    key = "9b2f6c1e-3d4a-4f5b-8c7d-1e2f3a4b5c6d"
    responses = _race(
        caller.token, RACERS, lambda client: client.post("/api/v1/players/me/token", HTTP_IDEMPOTENCY_KEY=key)
    )
    assert [response.status_code for response in responses] == [200] * RACERS, [
        response.content for response in responses
    ]
    assert len({response.json()["token"] for response in responses}) == 1
    replayed = [response.headers.get("Idempotent-Replayed") for response in responses]
    assert replayed.count("true") == RACERS - 1
    [new] = {response.json()["token"] for response in responses}
    assert Player.objects.get(id=caller.player_id).token_hash == token_hash(new)
