"""Shared pieces of the API: rate limits read at request time, helpers for the request headers that guard
writes (If-Match, Idempotency-Key), and strict input fields."""

import re
from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension, OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiParameter
from rest_framework import parsers, serializers, throttling
from rest_framework.request import Request
from rest_framework.settings import api_settings

from kingscorner.domain import DomainError
from kingscorner.json_depth import MAX_JSON_DEPTH, JsonTooDeep, check_depth

IDEMPOTENCY_KEY_MAX_LENGTH = 255


class _RateFromSettings:
    """DRF reads throttle rates once, at import; these read them at each request, so settings changes
    (and tests) take effect."""

    scope: str

    def get_rate(self) -> str | None:
        rate: str | None = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        return rate

    def wait(self) -> float | None:
        # DRF gives no wait when more requests are counted than the rate now allows (it was lowered): the
        # oldest counted request leaves the window then, which Retry-After can always name.
        wait: float | None = super().wait()  # type: ignore[misc]
        if wait is None and self.history:  # type: ignore[attr-defined]
            return float(self.duration - (self.now - self.history[-1]))  # type: ignore[attr-defined]
        return wait


class AddressRateThrottle(_RateFromSettings, throttling.AnonRateThrottle):
    """Requests without a token, counted per client address (RATE_LIMIT_ANON)."""


class PlayerRateThrottle(_RateFromSettings, throttling.UserRateThrottle):
    """Requests with a token, counted per player (RATE_LIMIT_USER)."""


class InvalidIfMatch(DomainError):
    code = "invalid_if_match"


class VersionMismatch(DomainError):
    code = "version_mismatch"


class InvalidIdempotencyKey(DomainError):
    code = "invalid_idempotency_key"


_VERSION_TAG = re.compile(r'^\s*(?:W/)?"?(\d{1,9})"?\s*$')


def if_match_version(request: Request) -> int | None:
    """The version an If-Match header names: `"3"`, `W/"3"` or `3`."""
    header = request.headers.get("If-Match")
    # An empty header says nothing, and `*` matches any version (RFC 9110): neither guards the write.
    if header is None or header.strip() in ("", "*"):
        return None
    match = _VERSION_TAG.match(header)
    if match is None:
        raise InvalidIfMatch('If-Match names one game version, as an ETag: "3".')
    return int(match.group(1))


def expected_version(request: Request, body_version: int | None) -> int | None:
    """The version a write is made against, from the body or If-Match; both must agree if both are sent."""
    header_version = if_match_version(request)
    if body_version is not None and header_version is not None and body_version != header_version:
        raise VersionMismatch(f"expected_version {body_version} and If-Match {header_version} disagree.")
    return body_version if body_version is not None else header_version


def idempotency_key(request: Request) -> str | None:
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not 1 <= len(key) <= IDEMPOTENCY_KEY_MAX_LENGTH or not key.isprintable():
        raise InvalidIdempotencyKey(
            f"An Idempotency-Key is 1 to {IDEMPOTENCY_KEY_MAX_LENGTH} printable characters."
        )
    return key


IF_MATCH_PARAMETER = OpenApiParameter(
    "If-Match",
    {"type": "string", "pattern": r'^[\t ]*(?:\*|(?:W/)?"?[0-9]{1,9}"?)?[\t ]*$'},
    OpenApiParameter.HEADER,
    required=False,
    description='The game version the request is made against, as its ETag ("3"); the same as '
    "`expected_version`. A stale version is refused with 409 `version_conflict`; empty or `*` guards "
    "nothing.",
)
# Printable characters as a header carries them (ISO 8859-1); HTTP drops spaces around a header's value.
_HEADER_VISIBLE = "!-~\\u00a1-\\u00ac\\u00ae-\\u00ff"
IDEMPOTENCY_KEY_PARAMETER = OpenApiParameter(
    "Idempotency-Key",
    {
        "type": "string",
        "minLength": 1,
        "maxLength": IDEMPOTENCY_KEY_MAX_LENGTH,
        "pattern": f"^[{_HEADER_VISIBLE}](?:[ {_HEADER_VISIBLE}]*[{_HEADER_VISIBLE}])?$",
    },
    OpenApiParameter.HEADER,
    required=False,
    description="Any unique string (a UUID): a retry with the same key and body returns the first response "
    "without applying anything again; the same key with another body is refused (422).",
)


# An input serializer that refuses members it does not know, so that a misspelt option is an error rather
# than silently ignored. `schema_constraints` adds JSON Schema keywords to its object schema. (A comment, not
# a docstring: the schema takes a serializer's docstring, inherited ones too, as its description.)
class StrictInputSerializer(serializers.Serializer):
    schema_constraints: dict[str, Any] = {}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: ["This field is not known."] for name in unknown}, code="unknown_field"
                )
        return super().to_internal_value(data)


class ConstantField(serializers.CharField):
    """A string member that always has one value, such as a move's or an event's `type`; in the schema it is
    an inline one-value enum, so that the many `type` members do not collide as enum components."""

    def __init__(self, value: str, **kwargs: Any) -> None:
        self.value = value
        super().__init__(**kwargs)


class ConstantFieldExtension(OpenApiSerializerFieldExtension):
    target_class = ConstantField

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        return {"type": "string", "enum": [self.target.value]}


class StrictCharField(serializers.CharField):
    """A string member that must be sent as a JSON string (DRF's CharField would take 5 as "5")."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        value: str = super().to_internal_value(data)
        return value


class StrictInputSerializerExtension(OpenApiSerializerExtension):
    """In the schema, a strict input object says that it takes no members besides its own."""

    target_class = StrictInputSerializer
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        schema["additionalProperties"] = False
        # Rules across members (`validate`) that JSON Schema can state, so that clients know them too.
        schema.update(getattr(self.target, "schema_constraints", {}))
        return schema


class JsonTooDeepError(DomainError):
    code = "json_too_deep"

    def __init__(self) -> None:
        super().__init__(f"The body nests arrays and objects more than {MAX_JSON_DEPTH} levels deep.")


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing a body nested more than MAX_JSON_DEPTH deep (400 `json_too_deep`) before
    any view reads it: without a bound, JSON nested past Python's recursion limit was a 500."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise JsonTooDeepError() from None
        try:
            check_depth(data)
        except JsonTooDeep:
            raise JsonTooDeepError() from None
        return data
