"""Moves raced at one version from real threads on PostgreSQL: the row lock lets exactly one apply."""

import json
import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from games.models import Game, GameMove
from tests.games.conftest import SEED, new_caller

RACERS = 8


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_eight_moves_raced_at_one_version_apply_exactly_once() -> None:
    caller = new_caller()
    view = caller.create_game(seed=SEED)
    barrier = threading.Barrier(RACERS)
    statuses: list[int] = []
    lock = threading.Lock()

    def race() -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {caller.token}")
        try:
            barrier.wait()
            response = client.post(
                f"/api/v1/games/{view['id']}/moves",
                {"moves": [{"type": "end_turn"}], "expected_version": view["version"]},
                format="json",
            )
            with lock:
                statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=race) for _ in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] + [409] * (RACERS - 1)
    game = Game.objects.get(id=view["id"])
    assert game.version == 2 and GameMove.objects.filter(game=game, seat=0).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_retries_raced_with_one_idempotency_key_apply_once_and_answer_alike() -> None:
    caller = new_caller()
    view = caller.create_game(seed=SEED)
    barrier = threading.Barrier(4)
    bodies: list[tuple[int, bytes]] = []
    lock = threading.Lock()

    def retry() -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {caller.token}")
        try:
            barrier.wait()
            response = client.post(
                f"/api/v1/games/{view['id']}/moves",
                {"moves": [{"type": "end_turn"}]},
                format="json",
                HTTP_IDEMPOTENCY_KEY="same",
            )
            with lock:
                bodies.append((response.status_code, response.content))
        finally:
            connection.close()

    threads = [threading.Thread(target=retry) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {status for status, _ in bodies} == {200}
    assert all(json.loads(body) == json.loads(bodies[0][1]) for _, body in bodies)
    assert Game.objects.get(id=view["id"]).version == 2
