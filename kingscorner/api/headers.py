"""The request headers that guard writes, If-Match and Idempotency-Key: reading them, and their schema."""

import re

from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request

from kingscorner.domain import DomainError

IDEMPOTENCY_KEY_MAX_LENGTH = 255


class InvalidIfMatch(DomainError):
    code = "invalid_if_match"


class VersionMismatch(DomainError):
    code = "version_mismatch"


class InvalidIdempotencyKey(DomainError):
    code = "invalid_idempotency_key"


_VERSION_TAG = re.compile(r'^\s*(?:W/)?"?([0-9]{1,9})"?\s*$')


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
