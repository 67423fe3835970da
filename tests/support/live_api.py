"""A client of a live server's API over HTTP, as a third party would call it, and a game played through it."""

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

MAX_MOVE_REQUESTS = 2000


def api(base_url: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    """One JSON request to the live server's API; an error status fails the test with the problem."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{base_url}/api/v1/{path}", data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        pytest.fail(f"{method} {path} answered {error.code}: {error.read().decode(errors='replace')}")


def play_to_the_end(base_url: str, token: str, game: dict[str, Any]) -> dict[str, Any]:
    """Plays a game through with the first legal move each time (a play whenever one is open) and returns
    its last view."""
    for _ in range(MAX_MOVE_REQUESTS):
        if game["status"] != "playing":
            return game
        body = {"moves": [game["legal_moves"][0]], "expected_version": game["version"]}
        game = api(base_url, "POST", f"games/{game['id']}/moves", body, token)
    pytest.fail("the game did not end within the request budget")
