"""The API's content negotiation (kingscorner/api/negotiation.py) chooses what DRF's chooses, for the Accept
headers whose choice it keeps and the others, on the first request and the next; but a `?format=` that no
renderer writes is 406 (DRF's 404), and a media range given `q=0` is not accepted."""

import pytest
from django.http import Http404
from django.test import Client
from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from kingscorner.api.negotiation import ContentNegotiation
from kingscorner.api.renderers import SCHEMA_RENDERERS, JSONRenderer

RENDERER_SETS: list[list[type[BaseRenderer]]] = [
    [JSONRenderer],
    [JSONRenderer, BrowsableAPIRenderer],
    SCHEMA_RENDERERS,
]
ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "application/json; indent=4",
    "text/html",
    "application/yaml",
    "image/png",
]


def _choice(
    negotiator: DefaultContentNegotiation, accept: str | None, query: str, classes: list[type[BaseRenderer]]
) -> object:
    factory = APIRequestFactory()
    raw = factory.get(f"/x{query}") if accept is None else factory.get(f"/x{query}", HTTP_ACCEPT=accept)
    request = Request(raw)
    renderers = [renderer() for renderer in classes]
    try:
        renderer, media_type = negotiator.select_renderer(request, renderers)
    except exceptions.NotAcceptable:
        return "406"
    except Http404:
        return "404"
    return type(renderer), media_type


@pytest.mark.parametrize("classes", RENDERER_SETS)
@pytest.mark.parametrize("query", ["", "?format=json", "?format=yaml"])
def test_the_kept_choices_are_drfs(classes: list[type[BaseRenderer]], query: str) -> None:
    for _ in range(2):
        for accept in ACCEPTS:
            drfs = _choice(DefaultContentNegotiation(), accept, query, classes)
            assert _choice(ContentNegotiation(), accept, query, classes) == ("406" if drfs == "404" else drfs)


@pytest.mark.parametrize(
    ("accept", "chosen"),
    [
        ("application/json;q=0", "406"),
        ("application/json; q=0.000", "406"),
        # The most specific range decides: JSON is refused, however broadly the rest is accepted.
        ("application/json;q=0, */*;q=0.1", "406"),
        ("application/*;q=0, */*", "406"),
        ("*/*;q=0, application/json", "application/json"),
        ("application/*;q=0, application/json;q=0.5", "application/json"),
        ("*/*;q=0", "406"),
        ("text/html, application/json;q=0", "406"),
        ("application/json;q=0.001", "application/json"),
        ("application/json;q=zero", "application/json"),
    ],
)
def test_a_media_range_given_q_0_is_not_accepted(accept: str, chosen: str) -> None:
    choice = _choice(ContentNegotiation(), accept, "", [JSONRenderer])
    assert (choice if choice == "406" else choice[1].partition(";")[0]) == chosen  # type: ignore[index]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "query", "accept"),
    [
        ("/api/v1/rules", "?format=xml", None),
        ("/api/v1/rules", "?format=yaml", None),
        ("/api/v1/health", "?format=api", None),
        ("/api/v1/rules", "", "application/json;q=0"),
        ("/api/v1/schema/", "?format=xml", None),
    ],
)
def test_an_answer_in_no_format_the_operation_writes_is_406_not_acceptable(
    client: Client, path: str, query: str, accept: str | None
) -> None:
    headers = {} if accept is None else {"Accept": accept}
    response = client.get(path + query, headers=headers)
    assert response.status_code == 406
    assert response.json()["code"] == "not_acceptable"
