"""The API's JSON renderer (DRF's output, written by orjson), and the OpenAPI document's renderers."""

import json
from collections.abc import Mapping
from typing import Any

import orjson
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiYamlRenderer
from rest_framework import renderers
from rest_framework.utils import encoders

# Dates and times go to DRF's encoder (it writes them as DRF always has, not as orjson would); so do
# dataclasses, which DRF's encoder refuses. Subclasses of str, int, dict and list (DRF's ReturnDict) are
# written as their base class, as the standard library does.
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_LINE_SEPARATOR, _PARAGRAPH_SEPARATOR = "\u2028".encode(), "\u2029".encode()


class JSONRenderer(renderers.JSONRenderer):
    """DRF's JSONRenderer, byte for byte the same compact UTF-8, written by orjson: the same keys in the same
    order, the same strings and numbers, U+2028 and U+2029 escaped (for JavaScript). What orjson will not
    write the way the standard library does (a dict key that is not a string, an integer beyond 64 bits, a
    type neither knows, an indented answer asked for with `Accept: application/json; indent=4`) is written
    by DRF's renderer instead, so that nothing changes but the time taken. The API writes no floats; orjson
    would write a NaN that DRF's strict renderer refuses as null."""

    _encoder = encoders.JSONEncoder()

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        if (
            self.ensure_ascii
            or not self.compact
            or self.get_indent(accepted_media_type or "", renderer_context or {}) is not None
        ):
            return bytes(super().render(data, accepted_media_type, renderer_context))
        try:
            output = orjson.dumps(data, default=self._encoder.default, option=_OPTIONS)
        except TypeError:
            # orjson.JSONEncodeError: a key that is not a string, an integer beyond 64 bits, an unknown type,
            # or a lone surrogate, which UTF-8 cannot hold either.
            try:
                return bytes(super().render(data, accepted_media_type, renderer_context))
            except UnicodeEncodeError:
                return self.render(_without_lone_surrogates(data), accepted_media_type, renderer_context)
        if _LINE_SEPARATOR in output or _PARAGRAPH_SEPARATOR in output:
            output = output.replace(_LINE_SEPARATOR, b"\\u2028").replace(_PARAGRAPH_SEPARATOR, b"\\u2029")
        return output


def _replaced(text: str) -> str:
    return "".join("\ufffd" if "\ud800" <= character <= "\udfff" else character for character in text)


def _without_lone_surrogates(node: Any) -> Any:
    """`node` with every lone surrogate in its strings and keys replaced by U+FFFD. JSON's `\\ud800` escape
    reads as one (a pair reads as the character it encodes), and a refusal that names what it refused (an
    unknown member, a value not among the choices) would hold it, where UTF-8 cannot."""
    if isinstance(node, str):
        return _replaced(node)
    if isinstance(node, Mapping):
        return {
            _replaced(key) if isinstance(key, str) else key: _without_lone_surrogates(value)
            for key, value in node.items()
        }
    if isinstance(node, list | tuple):
        return [_without_lone_surrogates(item) for item in node]
    return node


def _sorted(node: Any, *, keep_order: bool = False) -> Any:
    """`node` with the keys of every mapping sorted, but for a schema's `properties`, whose order is the
    order of the members in the bodies (and of the fields a code generator writes)."""
    if isinstance(node, dict):
        keys = list(node) if keep_order else sorted(node, key=str)
        return {str(key): _sorted(node[key], keep_order=key == "properties") for key in keys}
    if isinstance(node, list | tuple):
        return [_sorted(item) for item in node]
    return node


class SchemaJsonRenderer(OpenApiJsonRenderer):
    """The OpenAPI document as compact JSON, its keys sorted, so that two builds are the same bytes."""

    format = "json"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        text = json.dumps(_sorted(data), cls=encoders.JSONEncoder, ensure_ascii=False, separators=(",", ":"))
        return text.encode()


class SchemaPlainJsonRenderer(SchemaJsonRenderer):
    media_type = "application/json"


class SchemaYamlRenderer(OpenApiYamlRenderer):
    """The OpenAPI document as YAML, its keys sorted."""

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        rendered = super().render(_sorted(data), accepted_media_type, renderer_context)  # type: ignore[no-untyped-call]
        return bytes(rendered)


class SchemaPlainYamlRenderer(SchemaYamlRenderer):
    media_type = "application/yaml"


# JSON first: a client that names no type (or `*/*`) gets JSON; YAML on `Accept: application/vnd.oai.openapi`
# or `application/yaml`, or `?format=yaml`.
SCHEMA_RENDERERS: list[type[renderers.BaseRenderer]] = [
    SchemaJsonRenderer,
    SchemaPlainJsonRenderer,
    SchemaYamlRenderer,
    SchemaPlainYamlRenderer,
]
