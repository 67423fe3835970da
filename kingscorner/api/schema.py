"""The OpenAPI document, built once per process and served as bytes: with an ETag (a request that names it in
If-None-Match gets 304), Cache-Control, and gzip-compressed when the client accepts it.

drf-spectacular builds the document anew on every request (seconds of CPU for this API), so without this an
anonymous client could keep workers busy with it. The document is the same for every request but for its
`servers` entry (the origin it is served from, kingscorner.api.openapi.postprocess_schema): it is built and
rendered once with a placeholder origin, which each origin's bytes replace (a host Django accepted holds only
characters that need no escaping in JSON or YAML)."""

import gzip
import hashlib
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.http import HttpResponse, HttpResponseBase, HttpResponseNotModified
from django.utils.cache import patch_vary_headers
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.views import SpectacularAPIView
from rest_framework.permissions import AllowAny
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from kingscorner.api.renderers import SCHEMA_RENDERERS, JSONRenderer

PLACEHOLDER_ORIGIN = "https://origin.kingscorner.invalid"
# Clients and caches may keep the document this long, then revalidate it with its ETag (a 304 costs a
# fraction of a millisecond); a deployment serves a new document under a new ETag.
CACHE_CONTROL = "public, max-age=300"
# The origins (scheme and host) whose bytes are kept; ALLOWED_HOSTS bounds them in production.
ORIGINS_KEPT = 8

_build_lock = threading.Lock()


@dataclass(frozen=True)
class ServedSchema:
    body: bytes
    gzipped: bytes
    etag: str
    content_type: str


@lru_cache(maxsize=1)
def _document() -> dict[str, Any]:
    document: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
    document["servers"] = [{"url": PLACEHOLDER_ORIGIN, "description": "This server"}]
    return document


def _renderer(name: str) -> type[BaseRenderer]:
    return next(renderer for renderer in SCHEMA_RENDERERS if renderer.__name__ == name)


@lru_cache(maxsize=8)
def _rendered(renderer_name: str) -> bytes:
    renderer_class = _renderer(renderer_name)
    body = renderer_class().render(_document(), renderer_class.media_type, {})
    return body if isinstance(body, bytes) else body.encode()


@lru_cache(maxsize=ORIGINS_KEPT * 4)
def _served(renderer_name: str, origin: str) -> ServedSchema:
    renderer_class = _renderer(renderer_name)
    body = _rendered(renderer_name).replace(PLACEHOLDER_ORIGIN.encode(), origin.encode())
    charset = getattr(renderer_class, "charset", None)
    return ServedSchema(
        body=body,
        gzipped=gzip.compress(body, compresslevel=6, mtime=0),
        etag='"' + hashlib.sha256(body).hexdigest()[:32] + '"',
        content_type=renderer_class.media_type + (f"; charset={charset}" if charset else ""),
    )


def schema_served(renderer_class: type[BaseRenderer], origin: str) -> ServedSchema:
    """The document's bytes for a renderer and an origin; built by one thread at a time, so that requests
    arriving while it is built wait for it rather than build it again."""
    with _build_lock:
        return _served(renderer_class.__name__, origin)


def schema_warm() -> None:
    """Builds the document and renders it as JSON and YAML, for a server to call before it takes requests."""
    with _build_lock:
        for renderer_class in SchemaApi.renderer_classes:
            _rendered(renderer_class.__name__)


def _accepts_gzip(request: Request) -> bool:
    codings = request.META.get("HTTP_ACCEPT_ENCODING", "")
    for coding in codings.split(","):
        name, _, params = coding.strip().partition(";")
        if name.strip().lower() in {"gzip", "*"} and params.replace(" ", "") not in {"q=0", "q=0.0"}:
            return True
    return False


class SchemaApi(SpectacularAPIView):
    """drf-spectacular's schema view (its operation, content negotiation and the API's rate limit), serving
    the bytes built once per process: JSON by default, YAML when asked (kingscorner.api.renderers). It takes
    no token (an Authorization header is ignored, as by `health` and `rules`), so that it reads nothing from
    the database; its rate limit counts the client's address. A refusal is a problem document in JSON
    (`application/problem+json`) whatever form of the document was asked for."""

    renderer_classes = SCHEMA_RENDERERS
    authentication_classes = ()
    permission_classes = (AllowAny,)

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        # The document's responses are plain HttpResponses (typed as DRF's by its stubs): only a Response is
        # rendered here.
        if isinstance(response, Response) and response.status_code >= 400:
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
        return response

    def _get_schema_response(self, request: Request) -> HttpResponseBase:
        renderer_class = type(request.accepted_renderer)
        served = schema_served(renderer_class, request.build_absolute_uri("/").rstrip("/"))
        headers = {"ETag": served.etag, "Cache-Control": CACHE_CONTROL}
        response: HttpResponseBase
        if served.etag in request.META.get("HTTP_IF_NONE_MATCH", ""):
            response = HttpResponseNotModified(headers=headers)
        elif _accepts_gzip(request):
            headers["Content-Encoding"] = "gzip"
            response = HttpResponse(served.gzipped, content_type=served.content_type, headers=headers)
        else:
            response = HttpResponse(served.body, content_type=served.content_type, headers=headers)
        patch_vary_headers(response, ["Accept", "Accept-Encoding"])
        return response
