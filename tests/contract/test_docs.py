"""The documentation teaches: the served OpenAPI document is valid (openapi-spec-validator), passes
Spectral's OpenAPI rule set without a warning, gives every operation a summary, a description, a tag and
real examples, and leaks no developer comment; `/` leads to the docs, which Swagger UI serves, and `/api/v1/`
links the API."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import Resolver404, resolve
from openapi_spec_validator import validate

from kingscorner.api.problems import PROBLEMS
from tests.support.ci import IN_CI
from tests.support.openapi import responses_of, served_document

PROJECT = Path(__file__).resolve().parents[2]
SPECTRAL = "@stoplight/spectral-cli@6.16.3"
JSON_TYPES = ("application/json", "application/problem+json")


def operations() -> list[dict[str, Any]]:
    return [operation for path in served_document()["paths"].values() for operation in path.values()]


def test_the_served_document_is_valid_openapi() -> None:
    validate(served_document())


def test_the_served_document_passes_spectrals_openapi_rules_without_a_warning(tmp_path: Path) -> None:
    npx = shutil.which("npx")
    if npx is None:
        if IN_CI:
            pytest.fail("CI lints the schema with Spectral, which needs npx (Node.js)")
        pytest.skip("needs npx (Node.js) to run Spectral")
    # The ruleset names the document's parts it exempts by a glob that Spectral matches relative to where
    # it runs: the document, a copy of the ruleset and the run all sit in one folder.
    (tmp_path / "openapi.json").write_text(json.dumps(served_document(), indent=2))
    shutil.copy(PROJECT / ".spectral.yaml", tmp_path / ".spectral.yaml")
    command = [npx, "--yes", SPECTRAL, "lint", "openapi.json", "--ruleset", ".spectral.yaml"]
    result = subprocess.run(
        [*command, "--fail-severity=warn", "--format=text"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, "NO_UPDATE_NOTIFIER": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_operation_has_a_summary_a_description_and_a_defined_tag() -> None:
    tags = {tag["name"] for tag in served_document()["tags"]}
    for operation in operations():
        assert operation.get("summary") and len(operation["summary"]) <= 50, operation["operationId"]
        assert len(operation.get("description", "")) >= 60, operation["operationId"]
        assert operation.get("tags") and set(operation["tags"]) <= tags, operation["operationId"]


def _contents(operation: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = [
        (f"{status}", response.get("content", {})) for status, response in responses_of(operation).items()
    ]
    found.append(("request", operation.get("requestBody", {}).get("content", {})))
    return [
        (where, media) for where, content in found for kind, media in content.items() if kind in JSON_TYPES
    ]


def test_every_json_body_of_every_operation_has_an_example_and_none_is_a_placeholder() -> None:
    for operation in operations():
        for where, media in _contents(operation):
            assert media.get("examples"), (operation["operationId"], where)
            text = json.dumps(media["examples"])
            for placeholder in ('"string"', "additionalProp", '"2019-08-24', '"3fa85f64'):
                assert placeholder not in text, (operation["operationId"], where, placeholder)


def test_no_developer_comment_is_in_the_document() -> None:
    text = json.dumps(served_document())
    for word in ("serializer", "Serializer", "DRF", "docstring", "schema_constraints", "TODO", "ApiProblem"):
        assert word not in text, word


def _resolved(document: dict[str, Any], example: dict[str, Any]) -> dict[str, Any]:
    """An example, or the shared one in components.examples it refers to."""
    ref = example.get("$ref")
    if ref is None:
        return example
    shared: dict[str, Any] = document["components"]["examples"][ref.rsplit("/", 1)[-1]]
    return shared


def test_the_problem_responses_name_their_codes_and_the_status_rule_is_in_the_description() -> None:
    document = served_document()
    moves = document["paths"]["/api/v1/games/{game_id}/moves"]["post"]["responses"]
    for status, code in (("409", "version_conflict"), ("422", "does_not_fit"), ("429", "rate_limited")):
        assert f"`{code}`" in moves[status]["description"]
        examples = moves[status]["content"]["application/problem+json"]["examples"].values()
        assert code in [_resolved(document, example)["value"]["code"] for example in examples]
    assert "move_index" in json.dumps(moves["422"]["content"]["application/problem+json"]["examples"])
    rule = {line.split(" | ")[0]: line for line in document["info"]["description"].splitlines()}
    assert "`game_over`" in rule["| 409"] and "`does_not_fit`" in rule["| 422"]


@pytest.mark.django_db
def test_the_root_redirects_to_the_docs_and_the_index_links_the_api(client: Client) -> None:
    root = client.get("/")
    assert root.status_code == 302 and root["Location"] == "/api/v1/docs/"
    index = client.get("/api/v1/")
    assert index.status_code == 200
    links = index.json()
    assert {"docs", "schema", "health", "players", "games", "daily", "analysis"} <= set(links)
    for url in links.values():
        assert url.startswith("http://testserver/api/v1/")
        try:
            resolve(url.removeprefix("http://testserver"))
        except Resolver404:
            pytest.fail(f"{url} is no URL of the API")
    assert client.get(links["docs"]).status_code == 200


def test_docs_page_serves_swagger_ui(client: Client) -> None:
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200
    assert b"swagger-ui" in response.content


# A status followed by codes in backticks, as the guides write a refusal: 409 `game_over`, 409
# `hand_in_progress` / `game_over`, 400 `invalid_date_range`, `date_too_far_ahead`; and a row of a table of
# statuses: | 409 | when | `version_conflict`, `game_over` |.
_STATUS_AND_CODES = re.compile(r"\b([1-5]\d\d)(?: [a-z]+)?,? ((?:`[a-z_]+`(?:, | / | or | and )?)+)")
_STATUS_ROW = re.compile(r"^\| ([1-5]\d\d) \|(.*)$", re.MULTILINE)
_CODE = re.compile(r"`([a-z_]+)`")
GUIDES = sorted((PROJECT / "docs").glob("*.md"))


def _named_statuses(text: str) -> list[tuple[str, int]]:
    named = [
        (code, int(status))
        for status, codes in _STATUS_AND_CODES.findall(text)
        for code in _CODE.findall(codes)
    ]
    named += [(code, int(status)) for status, row in _STATUS_ROW.findall(text) for code in _CODE.findall(row)]
    return [(code, status) for code, status in named if code in PROBLEMS]


def test_every_code_the_guides_name_with_a_status_has_that_status_in_the_registry() -> None:
    assert {guide.stem for guide in GUIDES} >= {"api", "daily", "tables-and-streams", "operations", "rules"}
    named = [
        (guide.name, code, status, PROBLEMS[code].status)
        for guide in (PROJECT / "README.md", *GUIDES)
        for code, status in _named_statuses(guide.read_text(encoding="utf-8"))
    ]
    # The errors table of docs/api.md names every code with its status.
    assert {code for name, code, _, _ in named if name == "api.md"} >= {"version_conflict", "does_not_fit"}
    assert len(named) > 100
    assert [entry for entry in named if entry[2] != entry[3]] == []


def test_a_code_named_with_another_status_is_caught() -> None:
    assert _named_statuses(
        "a finished game is 422 `game_over`, a hand 409 `hand_in_progress` / `game_over`"
    ) == [
        ("game_over", 422),
        ("hand_in_progress", 409),
        ("game_over", 409),
    ]
    assert _named_statuses("| 404 | not found | `game_not_found`, `table_full` |") == [
        ("game_not_found", 404),
        ("table_full", 404),
    ]
