"""The API's JSON parser: DRF's, read by orjson, with a bound on how deeply a body may nest."""

import io
import re
from typing import Any

import orjson
from django.conf import settings
from rest_framework import parsers

from kingscorner.domain import DomainError
from kingscorner.json_depth import MAX_JSON_DEPTH, JsonTooDeep, check_depth

# A run of 19 digits or more may be an integer beyond 64 bits, which orjson reads as a float where the
# standard library reads an int.
_LONG_NUMBER = re.compile(rb"\d{19}")
_UTF_8 = {"utf-8", "utf8"}


class JsonTooDeepError(DomainError):
    code = "json_too_deep"

    def __init__(self) -> None:
        super().__init__(f"The body nests arrays and objects more than {MAX_JSON_DEPTH} levels deep.")


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, reading with orjson, refusing a body nested more than MAX_JSON_DEPTH deep (400
    `json_too_deep`) before any view reads it: without a bound, JSON nested past Python's recursion limit was
    a 500.

    orjson reads a UTF-8 body into the same values as the standard library; a body it refuses, or one that
    it would read otherwise (an integer beyond 64 bits), is read by DRF's parser as before, so that what is
    accepted, what it means, and the 400 `malformed_json` of what is not are all unchanged (a NaN, a byte
    order mark or a lone surrogate escape included)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        body: bytes = stream.read()
        data: Any = None
        read = False
        if str(encoding).lower() in _UTF_8 and not _LONG_NUMBER.search(body):
            try:
                data, read = orjson.loads(body), True
            except orjson.JSONDecodeError:
                pass
        if not read:
            try:
                data = super().parse(io.BytesIO(body), media_type, parser_context)
            except RecursionError:
                raise JsonTooDeepError() from None
        try:
            check_depth(data)
        except JsonTooDeep:
            raise JsonTooDeepError() from None
        return data
