"""The API's content negotiation (kingscorner/api/negotiation.py) chooses what DRF's chooses, for the Accept
headers whose choice it keeps and the others, on the first request and the next."""

import pytest
from django.http import Http404
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
            assert _choice(ContentNegotiation(), accept, query, classes) == _choice(
                DefaultContentNegotiation(), accept, query, classes
            )
