"""The schema: served as OpenAPI, generated without a warning, naming every games operation and stating the
limits the API applies."""

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from games.engine import DECK, PILES


@pytest.mark.django_db
def test_the_schema_describes_every_games_operation() -> None:
    response = APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = json.loads(response.content)
    operations = {op["operationId"] for path in schema["paths"].values() for op in path.values()}
    assert {
        "players_create",
        "players_me",
        "players_token_rotate",
        "games_list",
        "games_create",
        "games_get",
        "games_moves",
        "games_hands_deal",
        "games_events",
        "games_hint",
        "analysis",
    } <= operations
    assert "bearerAuth" in schema["components"]["securitySchemes"]
    moves = schema["paths"]["/api/v1/games/{game_id}/moves"]["post"]["responses"]
    assert "application/problem+json" in moves["409"]["content"]
    components = schema["components"]["schemas"]
    moves_input = components["GameMovesInputRequest"]["properties"]["moves"]
    assert (moves_input["minItems"], moves_input["maxItems"]) == (1, 200)
    piles_input = components["AnalysisInputRequest"]["properties"]["piles"]
    assert list(piles_input["properties"]) == list(PILES) and piles_input["additionalProperties"] is False


@pytest.mark.django_db
def test_the_schema_states_the_limits_the_api_applies() -> None:
    response = APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = json.loads(response.content)

    def parameter(path: str, name: str) -> dict[str, Any]:
        found: dict[str, Any] = next(
            p["schema"] for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name
        )
        return found

    for path in ("/api/v1/daily/{day}", "/api/v1/daily/{day}/leaderboard"):
        assert parameter(path, "day")["pattern"] == "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    for path in ("/api/v1/games", "/api/v1/daily/{day}/leaderboard"):
        limit = parameter(path, "limit")
        assert (limit["minimum"], limit["maximum"]) == (1, 100)
    hand = schema["components"]["schemas"]["AnalysisInputRequest"]["properties"]["hand"]
    assert hand["maxItems"] == len(DECK) and hand["items"]["pattern"]


@pytest.mark.django_db
def test_schema_endpoint_serves_openapi(client: Client) -> None:
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    assert json.loads(response.content)["info"]["title"] == "Kings Corner API"


def test_schema_generates_without_warnings(tmp_path: Path) -> None:
    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(tmp_path / "schema.yaml"))
    assert (tmp_path / "schema.yaml").read_text().startswith("openapi:")
