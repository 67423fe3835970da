"""Errors as problem+json (kingscorner/api/errors.py): Django's and DRF's errors and the domain's, rendered
from the registry with their status, members and headers, and a body too large for Django a 413, not a 500."""

import json
from typing import Any

import pytest
from django.test import Client, override_settings
from rest_framework import serializers
from rest_framework.exceptions import Throttled
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from games.errors import VersionConflict
from tests.support.problems import assert_problem


class ProbeApi(APIView):
    """A view that exercises the error handler: it validates its body or raises what the query names."""

    class ProbeInputSerializer(serializers.Serializer[Any]):
        count = serializers.IntegerField(min_value=1)

    def post(self, request: Request) -> Response:
        match request.query_params.get("raise"):
            case "conflict":
                raise VersionConflict(version=7, expected=6, current={"version": 7})
            case "throttled":
                raise Throttled(wait=2.5)
            case "read_body":
                request.body  # noqa: B018 - Django checks the size limit when the body is read
        serializer = self.ProbeInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(serializer.validated_data)


def probe(body: bytes | str, *, query: str = "", content_type: str = "application/json") -> Response:
    request = APIRequestFactory().post(f"/probe{query}", body, content_type=content_type)
    response = ProbeApi.as_view()(request)
    response.render()
    return response


def test_unknown_url_is_a_404_problem(client: Client) -> None:
    body = assert_problem(client.get("/api/v1/no-such-thing"), status=404, code="not_found")
    assert "/api/v1/no-such-thing" in str(body["detail"])


def test_wrong_method_is_a_405_problem_with_allow_header(client: Client) -> None:
    response = client.delete("/api/v1/health")
    assert_problem(response, status=405, code="method_not_allowed")
    assert "GET" in response["Allow"]


def test_malformed_json_is_a_400_problem() -> None:
    assert_problem(probe('{"count": '), status=400, code="malformed_json")


def test_invalid_field_is_a_400_problem_naming_the_field() -> None:
    body = assert_problem(probe('{"count": 0}'), status=400, code="invalid_request")
    assert list(body["errors"]) == ["count"]


def test_valid_body_passes_the_probe() -> None:
    response = probe('{"count": 3}')
    assert response.status_code == 200
    assert json.loads(response.content) == {"count": 3}


def test_unsupported_media_type_is_a_415_problem() -> None:
    assert_problem(probe("count=3", content_type="text/plain"), status=415, code="unsupported_media_type")


def test_a_domain_error_is_rendered_from_the_registry_with_its_members_and_headers() -> None:
    response = probe("{}", query="?raise=conflict")
    body = assert_problem(response, status=409, code="version_conflict")
    assert body["current"] == {"version": 7} and body["title"] == "Version conflict"
    assert response["ETag"] == '"7"'
    assert "version 7, not 6" in str(body["detail"])


def test_throttled_is_a_429_problem_with_retry_after() -> None:
    response = probe("{}", query="?raise=throttled")
    assert_problem(response, status=429, code="rate_limited")
    assert response["Retry-After"] == "3"


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1_000)
def test_api_view_reading_a_body_over_djangos_limit_is_a_413_problem_not_a_500() -> None:
    body = json.dumps({"count": 1, "padding": "x" * 2_000})
    assert_problem(probe(body, query="?raise=read_body"), status=413, code="body_too_large")


@override_settings(MAX_BODY_BYTES=10_000_000, DATA_UPLOAD_MAX_MEMORY_SIZE=1_000)
def test_django_view_reading_a_body_over_djangos_limit_is_a_413_problem_not_a_500(client: Client) -> None:
    response = client.post("/admin/login/", {"username": "x" * 2_000, "password": "p"})
    assert_problem(response, status=413, code="body_too_large")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/players", '{"\\ud800": "x"}'),
        ("/api/v1/games", '{"level": "\\ud800"}'),
        ("/api/v1/games", '{"\\udfff": 1}'),
        ("/api/v1/games", '{"seats": [{"kind": "\\ud800"}, {"kind": "person"}]}'),
        ("/api/v1/analysis", '{"hand": ["5S"], "piles": {"\\ud800": []}}'),
    ],
)
def test_a_refusal_naming_a_lone_surrogate_it_was_sent_is_a_400_in_utf_8_not_a_500(
    path: str, body: str
) -> None:
    """JSON's \\ud800 escape reads as a lone surrogate, which UTF-8 cannot hold: a refusal that names what it
    refused (an unknown member, a value not among the choices) writes U+FFFD in its place."""
    from games.services import player_create

    _, token = player_create(name="Ada")
    response = Client().post(
        path, body, content_type="application/json", headers={"Authorization": f"Bearer {token}"}
    )
    problem = assert_problem(response, 400, "invalid_request")
    assert "\ufffd" in json.dumps(problem["errors"], ensure_ascii=False)
    response.content.decode("utf-8")
