"""The API's content negotiation: DRF's, with its choice for the Accept headers nearly every request sends
(none, `*/*`, `application/json`) kept per set of renderers, so that such a request is not negotiated again
for an answer that depends on nothing else. Two of DRF's answers are HTTP's instead: a media type the client
gives `q=0` is one it does not accept, whatever a broader range says (RFC 9110, 12.4.2 and 12.5.1); and a
`?format=` no renderer of the operation writes is 406 `not_acceptable`, as the same choice made by `Accept`
is (DRF answers 404, as for a URL suffix)."""

from collections.abc import Iterable
from typing import Any

from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.utils.mediatypes import _MediaType

# The Accept headers whose choice is kept; any other is negotiated afresh, so that what the cache holds is
# bounded by the views' sets of renderers, whatever clients send.
_KEPT_ACCEPTS = frozenset({None, "*/*", "application/json"})
_choices: dict[tuple[tuple[type[BaseRenderer], ...], str | None], tuple[int, str]] = {}


def _refused_by(renderer: BaseRenderer, ranges: list[_MediaType]) -> bool:
    """Whether the Accept header refuses what `renderer` writes: the most specific of its ranges that match
    it (`application/json` before `application/*` before `*/*`, RFC 9110 12.5.1) are all given q=0."""
    written = _MediaType(renderer.media_type)
    matching = [each for each in ranges if written.match(each)]
    if not matching:
        return False
    most = max(each.precedence for each in matching)
    return all(_refused(each.orig) for each in matching if each.precedence == most)


def _refused(token: str) -> bool:
    """Whether an Accept header's media range carries `q=0` (or 0.0, 0.00, 0.000): one not acceptable."""
    for parameter in token.split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value.strip()) == 0
            except ValueError:
                return False
    return False


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

    def get_accept_list(self, request: Request) -> list[str]:
        # The ranges that accept: a range given q=0 refuses (_refused_by), it accepts nothing.
        accepted: list[str] = super().get_accept_list(request)
        return [token for token in accepted if not _refused(token)]

    def filter_renderers(self, renderers: Iterable[BaseRenderer], format: str) -> list[BaseRenderer]:
        named = [renderer for renderer in renderers if renderer.format == format]
        if not named:
            raise NotAcceptable(f"?format={format} names no format this operation answers in.")
        return named

    def _negotiated(
        self, request: Request, renderers: list[BaseRenderer], format_suffix: str | None
    ) -> tuple[BaseRenderer, str]:
        ranges = [_MediaType(token) for token in super().get_accept_list(request)]
        if any(_refused(each.orig) for each in ranges):
            renderers = [renderer for renderer in renderers if not _refused_by(renderer, ranges)]
            if not renderers:
                raise NotAcceptable()
        chosen: Any = super().select_renderer(request, renderers, format_suffix)
        renderer, media_type = chosen
        return renderer, str(media_type)
