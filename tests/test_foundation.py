"""The project's foundation: settings defaults, problem+json errors, the OpenAPI schema, docs and health."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client, override_settings
from rest_framework import serializers
from rest_framework.exceptions import Throttled
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from games.errors import VersionConflict
from tests.support.problems import assert_problem

PROJECT_DIR = Path(__file__).resolve().parent.parent


class ProbeApi(APIView):
    """A view that exercises the error handler: it validates its body or raises what the query names."""

    class ProbeInputSerializer(serializers.Serializer):
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


def test_settings_default_to_one_machine_with_no_services() -> None:
    script = (
        "import json; from django.conf import settings as s; "
        "print(json.dumps([s.DEBUG, s.DATABASES['default']['ENGINE'], s.CACHES['default']['BACKEND'], "
        "s.CELERY_BROKER_URL, s.CELERY_TASK_ALWAYS_EAGER, s.ALLOWED_HOSTS, s.DATA_UPLOAD_MAX_MEMORY_SIZE, "
        "s.DAILY_EPOCH.isoformat(), s.DAILY_OPPONENT_LEVEL, s.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES'], "
        "s.SECRET_KEY.startswith('django-insecure-'), s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS]))"
    )
    env = {"PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "kingscorner.settings"}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=PROJECT_DIR, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == [
        False,
        "django.db.backends.sqlite3",
        "django.core.cache.backends.locmem.LocMemCache",
        "memory://",
        True,
        ["127.0.0.1", "localhost", "[::1]", "testserver"],
        65536,
        "2026-01-01",
        "normal",
        {"anon": "600/min", "user": "1200/min"},
        True,
        False,
        0,
    ]


@pytest.mark.django_db
def test_health_reports_ok_with_database(client: Client) -> None:
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["database"] == "ok"


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
    assert list(body["errors"]) == ["count"]  # type: ignore[call-overload]


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


def test_body_over_the_limit_is_a_413_problem_before_any_view(client: Client) -> None:
    body = json.dumps({"padding": "x" * 70_000})
    response = client.post("/api/v1/health", body, content_type="application/json")
    assert_problem(response, status=413, code="body_too_large")


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1_000)
def test_api_view_reading_a_body_over_djangos_limit_is_a_413_problem_not_a_500() -> None:
    body = json.dumps({"count": 1, "padding": "x" * 2_000})
    assert_problem(probe(body, query="?raise=read_body"), status=413, code="body_too_large")


@override_settings(MAX_BODY_BYTES=10_000_000, DATA_UPLOAD_MAX_MEMORY_SIZE=1_000)
def test_django_view_reading_a_body_over_djangos_limit_is_a_413_problem_not_a_500(client: Client) -> None:
    response = client.post("/admin/login/", {"username": "x" * 2_000, "password": "p"})
    assert_problem(response, status=413, code="body_too_large")


@pytest.mark.django_db
def test_schema_endpoint_serves_openapi(client: Client) -> None:
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    assert json.loads(response.content)["info"]["title"] == "Kings Corner API"


def test_schema_generates_without_warnings(tmp_path: Path) -> None:
    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(tmp_path / "schema.yaml"))
    assert (tmp_path / "schema.yaml").read_text().startswith("openapi:")


def test_docs_page_serves_swagger_ui(client: Client) -> None:
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200
    assert b"swagger-ui" in response.content


@pytest.mark.django_db
def test_a_browser_on_another_origin_may_call_the_api_with_its_headers(client) -> None:
    preflight = client.options(
        "/api/v1/games",
        HTTP_ORIGIN="https://cards.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type, if-match, idempotency-key",
    )
    assert preflight.status_code == 200
    assert preflight["Access-Control-Allow-Origin"] == "*"
    allowed = preflight["Access-Control-Allow-Headers"].lower()
    for header in ("authorization", "content-type", "if-match", "idempotency-key"):
        assert header in allowed
    response = client.get("/api/v1/health", HTTP_ORIGIN="https://cards.example")
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "ETag" in response["Access-Control-Expose-Headers"]
    refused = client.get("/api/v1/nowhere", HTTP_ORIGIN="https://cards.example")
    assert refused.status_code == 404 and refused["Access-Control-Allow-Origin"] == "*"
