"""Each created resource answers 201 with its Location: a player, a game, a daily attempt's game."""

from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient

from daily import clock
from tests.support.games import Caller


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
