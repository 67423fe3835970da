"""Fixtures of the daily deal's tests: a movable clock and players with tokens (the helpers they share are
in tests/support/daily.py)."""

import pytest
from rest_framework.test import APIClient

from games.models import Player
from games.services import player_create
from tests.support.daily import Clock, MakePlayer


@pytest.fixture
def daily_clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The daily deal's clock, at noon UTC on TODAY until a test moves it."""
    return Clock(monkeypatch)


@pytest.fixture
def make_player(db: None) -> MakePlayer:
    def make(name: str = "Ada") -> tuple[Player, APIClient]:
        player, token = player_create(name=name)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return player, client

    return make
