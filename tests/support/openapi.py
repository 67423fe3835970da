"""Checks responses against the OpenAPI document the API serves, with openapi-core: every response a test
gets through Django's test client from an operation of the document must be one the document describes,
status, headers and body alike."""

import json
from collections.abc import AsyncIterator
from functools import cache
from typing import Any

from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.test import Client
from openapi_core import Config, OpenAPI
from openapi_core.contrib.django import DjangoOpenAPIRequest, DjangoOpenAPIResponse
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound
from openapi_schema_validator import OAS31Validator

from tests.support.problems import PROBLEM

SCHEMA_PATH = "/api/v1/schema/"


@cache
def served_document() -> dict[str, Any]:
    """The document as GET /api/v1/schema/ serves it (as JSON), fetched once."""
    response = Client().get(SCHEMA_PATH, HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200, response.content
    document: dict[str, Any] = json.loads(response.content)
    return document


def responses_of(operation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """An operation's responses by status, each read through its `$ref` when it is one of the document's
    shared responses (components.responses: 405 and 406, alike on every operation)."""
    shared = served_document()["components"].get("responses", {})
    return {
        status: shared[response["$ref"].rsplit("/", 1)[-1]] if "$ref" in response else response
        for status, response in operation["responses"].items()
    }


def openapi_of(document: dict[str, Any]) -> OpenAPI:
    """openapi-core's reader of `document`, which reads every media type the API answers with."""
    # Problem details are JSON under their own media type, and the rules document is text: openapi-core reads
    # them only when told how.
    config = Config(
        extra_media_type_deserializers={
            "application/problem+json": json.loads,
            "text/markdown": lambda body, **params: body.decode() if isinstance(body, bytes) else body,
        }
    )
    return OpenAPI.from_dict(document, config=config)


@cache
def _openapi() -> OpenAPI:
    return openapi_of(served_document())


def _request_of(response: HttpResponseBase) -> WSGIRequest | None:
    """The request that `response` answered, which the test clients attach to it (None for any other)."""
    request: WSGIRequest | None = getattr(response, "wsgi_request", None)
    return request


def operation_of(response: HttpResponseBase) -> tuple[str, str] | None:
    """(path template, method) of the documented operation that answered, or None for any other URL."""
    request = _request_of(response)
    # The document itself is no operation of it (and is fetched through the same client).
    if (
        request is None
        or request.method is None
        or request.resolver_match is None
        or request.path == SCHEMA_PATH
    ):
        return None
    template = DjangoOpenAPIRequest(request).path_pattern
    method = request.method.lower()
    paths = served_document()["paths"]
    if template is None or template not in paths or method not in paths[template]:
        return None
    return template, method


# The headers that say something about the API's resources; each one a response carries must be documented
# on its operation and status. (Content-Type, Vary, CORS, the security headers and the Allow that DRF adds
# to every response are HTTP's, described once in the document's introduction.)
API_HEADERS = ("ETag", "Location", "Retry-After", "Idempotent-Replayed", "WWW-Authenticate")


def check_response(response: HttpResponseBase) -> bool:
    """Raises unless a response of a documented operation is as the document describes it, every API header
    it carries included; False for a response that is not of a documented operation (an unknown URL, a
    method the URL does not take)."""
    operation = operation_of(response)
    if operation is None:
        return False
    path, method = operation
    answered = _request_of(response)
    assert answered is not None, (path, method, type(response))
    documented = responses_of(served_document()["paths"][path][method]).get(str(response.status_code))
    if response.get("Content-Type", "").startswith(EVENT_STREAM):
        assert documented is not None, (path, method, response.status_code)
        _check_event_stream(response, documented["content"][EVENT_STREAM]["schema"])
    else:
        assert isinstance(response, HttpResponse), (path, method, type(response))
        try:
            _openapi().validate_response(DjangoOpenAPIRequest(answered), DjangoOpenAPIResponse(response))
        except (PathNotFound, OperationNotFound):
            return False
        documented = responses_of(served_document()["paths"][path][method])[str(response.status_code)]
        if response.get("Content-Type") == PROBLEM:
            # A problem's code is one its operation lists for that status.
            code = json.loads(response.content)["code"]
            assert code in documented["x-codes"], (path, method, response.status_code, code)
    sent = {name for name in API_HEADERS if response.has_header(name)}
    assert sent <= set(documented.get("headers", {})), (path, method, response.status_code, sent)
    return True


EVENT_STREAM = "text/event-stream"


def _check_event_stream(response: HttpResponseBase, schema: dict[str, Any]) -> None:
    """An event stream's schema describes each of its events (as OpenAPI 3.2's itemSchema does, and as
    schemathesis reads it): every event of the body, its fields as text, must be one. The body is read here
    and put back for the test."""
    assert isinstance(response, StreamingHttpResponse)
    content = response.streaming_content
    assert not isinstance(content, AsyncIterator), "the test clients stream synchronously"
    body = b"".join(content)
    response.streaming_content = [body]
    for message in body.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in message.splitlines() if not line.startswith(":"))
        if "data" in fields:
            OAS31Validator(schema).validate(fields)
