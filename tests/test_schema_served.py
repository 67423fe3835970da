"""The OpenAPI document is built once per process and served as bytes with an ETag, Cache-Control and gzip;
its rate limit stays."""

import gzip
import json
from collections.abc import Iterator
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.settings import api_settings
from rest_framework.test import APIClient

from kingscorner.api import schema

JSON = "application/vnd.oai.openapi+json"


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the document's builds, from an empty cache; the cache is emptied again afterwards."""
    counted: list[int] = []
    build = SchemaGenerator.get_schema

    def counting(self: SchemaGenerator, *args: Any, **kwargs: Any) -> Any:
        counted.append(1)
        return build(self, *args, **kwargs)  # type: ignore[no-untyped-call]

    monkeypatch.setattr(SchemaGenerator, "get_schema", counting)
    for cached in (schema._document, schema._rendered, schema._served):
        cached.cache_clear()
    yield counted
    for cached in (schema._document, schema._rendered, schema._served):
        cached.cache_clear()


def test_the_document_is_built_once_for_every_request_and_format(builds: list[int]) -> None:
    client = APIClient()
    for accept in (JSON, "application/vnd.oai.openapi", JSON, "application/json"):
        assert client.get("/api/v1/schema/", HTTP_ACCEPT=accept).status_code == 200
    assert len(builds) == 1


def test_the_document_names_the_origin_it_is_served_from(builds: list[int]) -> None:
    for host in ("testserver", "localhost"):
        response = APIClient().get("/api/v1/schema/", HTTP_ACCEPT=JSON, HTTP_HOST=host)
        assert json.loads(response.content)["servers"][0]["url"] == f"http://{host}"
    assert len(builds) == 1


def test_the_document_has_an_etag_and_cache_control_and_a_matching_if_none_match_is_304(
    builds: list[int],
) -> None:
    client = APIClient()
    first = client.get("/api/v1/schema/", HTTP_ACCEPT=JSON)
    etag = first["ETag"]
    assert etag.startswith('"') and first["Cache-Control"] == "public, max-age=300"
    again = client.get("/api/v1/schema/", HTTP_ACCEPT=JSON, HTTP_IF_NONE_MATCH=etag)
    assert (again.status_code, again.content, again["ETag"]) == (304, b"", etag)
    yaml = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi", HTTP_IF_NONE_MATCH=etag)
    assert yaml.status_code == 200 and yaml["ETag"] != etag


def test_the_document_is_gzipped_for_a_client_that_accepts_it(builds: list[int]) -> None:
    client = APIClient()
    plain = client.get("/api/v1/schema/", HTTP_ACCEPT=JSON)
    zipped = client.get("/api/v1/schema/", HTTP_ACCEPT=JSON, HTTP_ACCEPT_ENCODING="br, gzip;q=0.8")
    assert "Content-Encoding" not in plain
    assert zipped["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.content) == plain.content
    assert len(zipped.content) * 5 < len(plain.content)
    assert "Accept-Encoding" in zipped["Vary"]
    refused = client.get("/api/v1/schema/", HTTP_ACCEPT=JSON, HTTP_ACCEPT_ENCODING="gzip;q=0, identity")
    assert "Content-Encoding" not in refused


def test_the_schema_keeps_its_rate_limit(monkeypatch: pytest.MonkeyPatch, builds: list[int]) -> None:
    monkeypatch.setitem(api_settings.DEFAULT_THROTTLE_RATES, "anon", "2/min")
    client = APIClient()
    statuses = [client.get("/api/v1/schema/", HTTP_ACCEPT=JSON).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


@pytest.mark.parametrize("query", ["?format=yaml", "?format=json", ""])
def test_a_refusal_of_the_document_is_a_json_problem_in_whatever_form_it_was_asked_for(
    monkeypatch: pytest.MonkeyPatch, builds: list[int], query: str
) -> None:
    """The document's own renderers (YAML, sorted JSON) write the document only: a 429 of a request for the
    YAML is `application/problem+json` in JSON, as every refusal is."""
    monkeypatch.setitem(api_settings.DEFAULT_THROTTLE_RATES, "anon", "0/min")
    refused = APIClient().get(f"/api/v1/schema/{query}")
    assert refused.status_code == 429 and refused["Content-Type"] == "application/problem+json"
    assert list(json.loads(refused.content))[:5] == ["type", "title", "status", "detail", "code"]
    assert refused["Retry-After"]


@pytest.mark.django_db
def test_the_document_takes_no_token_and_reads_nothing_from_the_database(
    builds: list[int], django_assert_num_queries: Any
) -> None:
    """An Authorization header is ignored, as by health and rules, whatever it holds: the document is served
    while the database is down or hung, token or not."""
    client = APIClient()
    client.get("/api/v1/schema/")  # built before counting
    for header in ("Bearer kc_not-a-token", "Basic abc", "Bearer"):
        with django_assert_num_queries(0):
            response = client.get("/api/v1/schema/", HTTP_AUTHORIZATION=header)
        assert response.status_code == 200, header
