"""The API's content negotiation: DRF's, with its choice for the Accept headers nearly every request sends
(none, `*/*`, `application/json`) kept per set of renderers, so that such a request is not negotiated again
for an answer that depends on nothing else."""

from collections.abc import Iterable
from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

# The Accept headers whose choice is kept; any other is negotiated afresh, so that what the cache holds is
# bounded by the views' sets of renderers, whatever clients send.
_KEPT_ACCEPTS = frozenset({None, "*/*", "application/json"})
_choices: dict[tuple[tuple[type[BaseRenderer], ...], str | None], tuple[int, str]] = {}


class ContentNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        accept = request.META.get("HTTP_ACCEPT")
        if (
            format_suffix
            or accept not in _KEPT_ACCEPTS
            or self.settings.URL_FORMAT_OVERRIDE in request.query_params
        ):
            return self._negotiated(request, renderers, format_suffix)
        key = (tuple(type(renderer) for renderer in renderers), accept)
        kept = _choices.get(key)
        if kept is None:
            renderer, media_type = self._negotiated(request, renderers, format_suffix)
            _choices[key] = (next(i for i, each in enumerate(renderers) if each is renderer), media_type)
            return renderer, media_type
        index, media_type = kept
        return renderers[index], media_type

    def _negotiated(
        self, request: Request, renderers: list[BaseRenderer], format_suffix: str | None
    ) -> tuple[BaseRenderer, str]:
        chosen: Any = super().select_renderer(request, renderers, format_suffix)
        renderer, media_type = chosen
        return renderer, str(media_type)
