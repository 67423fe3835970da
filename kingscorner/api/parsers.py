"""The API's JSON parser: DRF's, with a bound on how deeply a body may nest."""

from typing import Any

from rest_framework import parsers

from kingscorner.domain import DomainError
from kingscorner.json_depth import MAX_JSON_DEPTH, JsonTooDeep, check_depth


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
