"""GET /api/v1/rules and /api/v1/rules.md: the rule sets and options from the engine, and the rules document,
for anyone, token or not."""

import json
from pathlib import Path

import pytest
from django.test import Client

from games.engine.rules import OPTION_MEANINGS, OPTIONS, PRESETS, RULE_SET_DESCRIPTIONS, make_rules

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def test_rules_list_every_option_with_its_values_default_first_and_its_meaning(client: Client) -> None:
    response = client.get("/api/v1/rules")
    assert response.status_code == 200
    options = response.json()["options"]
    assert [option["name"] for option in options] == list(OPTIONS)
    for option in options:
        assert option["values"] == list(OPTIONS[option["name"]])
        assert option["default"] == option["values"][0]
        assert option["meaning"] == OPTION_MEANINGS[option["name"]]


def test_rules_list_the_three_rule_sets_with_every_options_value(client: Client) -> None:
    body = client.get("/api/v1/rules").json()
    assert body["default_rule_set"] == "classic"
    assert [rule_set["name"] for rule_set in body["rule_sets"]] == ["classic", "casual", "any_space"]
    for rule_set in body["rule_sets"]:
        assert rule_set["options"] == make_rules(rule_set["name"]).options()
        assert rule_set["description"] == RULE_SET_DESCRIPTIONS[rule_set["name"]]
    casual = next(rule_set for rule_set in body["rule_sets"] if rule_set["name"] == "casual")
    assert casual["options"]["king_pile_to_corner"] is True


def test_every_option_has_a_meaning_and_every_rule_set_a_description() -> None:
    assert set(OPTION_MEANINGS) == set(OPTIONS)
    assert set(RULE_SET_DESCRIPTIONS) == set(PRESETS)
    assert all(text.strip() for text in [*OPTION_MEANINGS.values(), *RULE_SET_DESCRIPTIONS.values()])


def test_rules_link_the_document_which_is_served_as_markdown_from_the_repository(client: Client) -> None:
    link = client.get("/api/v1/rules").json()["document"]
    assert link == "http://testserver/api/v1/rules.md"
    response = client.get("/api/v1/rules.md")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response.content == DOCUMENT.read_bytes()


def test_the_document_is_markdown_whatever_the_client_accepts(client: Client) -> None:
    response = client.get("/api/v1/rules.md", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"


@pytest.mark.parametrize("path", ["/api/v1/rules", "/api/v1/rules.md"])
def test_the_rules_need_no_token_and_ignore_a_bad_one(client: Client, path: str) -> None:
    for header in ("Bearer kc_not-a-token", "Bearer", "Basic dXNlcjpwYXNz"):
        assert client.get(path, HTTP_AUTHORIZATION=header).status_code == 200


@pytest.mark.parametrize("path", ["/api/v1/rules", "/api/v1/rules.md"])
def test_writing_to_the_rules_is_a_405_problem(client: Client, path: str) -> None:
    response = client.post(path, data="{}", content_type="application/json")
    assert response.status_code == 405
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "method_not_allowed"


@pytest.mark.django_db
def test_the_docs_page_description_links_the_rules_document(client: Client) -> None:
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = json.loads(response.content)
    assert "](/api/v1/rules.md)" in schema["info"]["description"]
    # No security requirement: neither needs a token (the schema has no global one).
    assert "security" not in schema
    assert "security" not in schema["paths"]["/api/v1/rules"]["get"]
    assert "security" not in schema["paths"]["/api/v1/rules.md"]["get"]
    document = schema["paths"]["/api/v1/rules.md"]["get"]["responses"]["200"]["content"]
    assert list(document) == ["text/markdown"]
