"""Fixtures for the games API: players with tokens, a client speaking for one, games played to the end."""

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from rest_framework.test import APIClient

from games.engine import MoveJson, Rules
from games.engine.players import best_turn

SEED = "ab" * 32


@dataclass
class Caller:
    """An API client holding one player's token; `seen` keeps every response body, for checks on them."""

    client: APIClient
    player_id: str
    token: str
    seen: list[tuple[str, Any]] = field(default_factory=list)
    after_each: Callable[["Caller", str, Any], None] | None = None

    def _record(self, path: str, response: Any) -> Any:
        body = json.loads(response.content) if response.content else None
        self.seen.append((path, body))
        if self.after_each is not None:
            self.after_each(self, path, body)
        return response

    def get(self, path: str, **extra: Any) -> Any:
        return self._record(path, self.client.get(path, **extra))

    def post(self, path: str, data: Any = None, **extra: Any) -> Any:
        body = json.dumps(data) if data is not None else ""
        return self._record(path, self.client.post(path, body, content_type="application/json", **extra))

    def create_game(self, **body: Any) -> dict[str, Any]:
        response = self.post("/api/v1/games", body)
        assert response.status_code == 201, response.content
        return dict(response.json())

    def moves(self, game: dict[str, Any], moves: Sequence[Mapping[str, Any]], **extra: Any) -> Any:
        return self.post(
            f"/api/v1/games/{game['id']}/moves",
            {"moves": moves, "expected_version": game["version"]},
            **extra,
        )


def new_caller(name: str = "Ada") -> Caller:
    client = APIClient()
    response = client.post("/api/v1/players", {"name": name}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {body['token']}")
    return Caller(client=client, player_id=body["id"], token=body["token"])


@pytest.fixture
def caller(db: None) -> Caller:
    return new_caller()


def whole_turn(view: dict[str, Any]) -> list[MoveJson]:
    """The moves sharp would make for the rest of the player's turn, computed on the client's side."""
    rules = Rules.from_json(view["rules"])
    return [move.to_json() for move in best_turn(rules, view["hand"], view["table"]["piles"])]


def play_to_the_end(caller: Caller, view: dict[str, Any], *, max_requests: int = 2000) -> dict[str, Any]:
    """Plays whole turns (and deals new hands) through the API until the game is finished."""
    for _ in range(max_requests):
        if view["status"] == "finished":
            return view
        if view["status"] == "hand_over":
            response = caller.post(f"/api/v1/games/{view['id']}/hands", {"expected_version": view["version"]})
        else:
            assert view["is_your_turn"]
            response = caller.moves(view, whole_turn(view))
        assert response.status_code == 200, response.content
        view = response.json()
    raise AssertionError("the game did not end")
