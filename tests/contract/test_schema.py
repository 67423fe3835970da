"""The schema: served as OpenAPI, generated without a warning, naming every games operation and stating the
limits the API applies."""

import json
import os
import subprocess
import sys
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


# The document's budget (issue 24): a code generator's input, read by clients on every start. 305,000 from
# 300,000 for the person stream's events, one schema a type (issue 23), inline to spend no component.
MAX_DOCUMENT_BYTES = 305_000
MAX_COMPONENT_SCHEMAS = 80


@pytest.mark.django_db
def test_the_document_is_json_by_default_and_yaml_when_asked() -> None:
    client = APIClient()
    default = client.get("/api/v1/schema/")
    assert default["Content-Type"] == "application/vnd.oai.openapi+json"
    assert json.loads(default.content)["openapi"] == "3.1.0"
    for yaml in (
        client.get("/api/v1/schema/?format=yaml"),
        client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi"),
        client.get("/api/v1/schema/", HTTP_ACCEPT="application/yaml"),
    ):
        assert yaml["Content-Type"].startswith(("application/vnd.oai.openapi;", "application/yaml;"))
        assert yaml.content.startswith(b"components:")
    assert client.get("/api/v1/schema/?format=json").content == default.content


@pytest.mark.django_db
def test_the_document_is_light_one_problem_schema_and_names_its_version() -> None:
    response = APIClient().get("/api/v1/schema/")
    document = json.loads(response.content)
    schemas = document["components"]["schemas"]
    assert len(response.content) <= MAX_DOCUMENT_BYTES
    assert len(schemas) <= MAX_COMPONENT_SCHEMAS
    assert [name for name in schemas if name.endswith("Problem")] == ["Problem"]
    assert document["info"]["version"] == response["API-Version"] == "1.1.0"


def test_the_document_is_the_same_bytes_in_every_process() -> None:
    """Built in two fresh interpreters with different hash seeds: sets and dicts cannot reorder it."""
    script = (
        "import django, hashlib, sys; django.setup(); "
        "from rest_framework.test import APIClient; "
        "sys.stdout.write(hashlib.sha256(APIClient().get('/api/v1/schema/').content).hexdigest())"
    )
    digests = set()
    for seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": seed, "DJANGO_SETTINGS_MODULE": "kingscorner.settings"}
        run = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=environment, check=True
        )
        digests.add(run.stdout)
    assert len(digests) == 1
