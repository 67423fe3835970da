"""The JSON parser (kingscorner/api/parsers.py): a body nested deeper than 32 levels is a 400
`json_too_deep`, never a 500, wherever the nesting is; orjson reads every body into what DRF's parser reads,
and refuses what it refuses."""

import io
import json
from typing import Any

import pytest
from rest_framework import exceptions
from rest_framework import parsers as drf_parsers

from kingscorner.api.parsers import JSONParser, JsonTooDeepError
from kingscorner.json_depth import MAX_JSON_DEPTH
from tests.support.games import Caller
from tests.support.problems import assert_problem


def test_json_nested_past_the_recursion_limit_is_a_400_not_a_500(caller: Caller) -> None:
    body = "[" * 20_000 + "]" * 20_000
    response = caller.client.post("/api/v1/games", data=body, content_type="application/json")
    assert_problem(response, 400, "json_too_deep")


def test_a_move_nested_past_the_recursion_limit_is_a_400_not_a_500(caller: Caller) -> None:
    # The review's 500: about 933 levels inside a move passed the parser and failed in DRF's JSONField.
    view = caller.create_game()
    card = "[" * 1_000 + "]" * 1_000
    body = '{"moves": [{"type": "play", "card": ' + card + ', "to": "N"}]}'
    response = caller.client.post(
        f"/api/v1/games/{view['id']}/moves", data=body, content_type="application/json"
    )
    assert_problem(response, 400, "json_too_deep")


def test_json_nested_32_deep_is_read_and_33_deep_is_refused(caller: Caller) -> None:
    def nested(depth: int) -> str:
        # The body is one level; `rules` holds the rest.
        return '{"rules": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"

    assert (
        caller.client.post("/api/v1/games", data=nested(32), content_type="application/json").json()["code"]
        == "invalid_rules"
    )
    response = caller.client.post("/api/v1/games", data=nested(33), content_type="application/json")
    assert_problem(response, 400, "json_too_deep")


def _drf(body: bytes) -> Any:
    return drf_parsers.JSONParser().parse(io.BytesIO(body))


READ = [
    b'{"moves": [{"type": "play", "card": "QD", "to": "N"}], "expected_version": 3}',
    b' {"name": "\\u00c5sa \\ud83c\\udca1", "a": 1, "a": 2} ',
    '{"name": "Åsa 王"}'.encode(),
    b'[1, -0, 0.5, 1e2, true, false, null, ""]',
    b'{"version": 123456789012345678901234567890, "low": -9223372036854775809}',
    b'{"long": "1234567890123456789012", "id": 18446744073709551615}',
    b'{"lone": "\\ud800"}',
    b"1e400",
]
REFUSED = [
    b"",
    b'{"moves": ',
    b"{'a': 1}",
    b'{"a": NaN}',
    b"[Infinity]",
    b"\xef\xbb\xbf{}",
    b'"\xff"',
    b"{} x",
]


@pytest.mark.parametrize("body", READ, ids=range(len(READ)))
def test_the_parser_reads_what_drfs_reads(body: bytes) -> None:
    ours, theirs = JSONParser().parse(io.BytesIO(body)), _drf(body)
    assert json.dumps(ours) == json.dumps(theirs)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("body", REFUSED, ids=range(len(REFUSED)))
def test_the_parser_refuses_what_drfs_refuses(body: bytes) -> None:
    with pytest.raises(exceptions.ParseError):
        _drf(body)
    with pytest.raises(exceptions.ParseError):
        JSONParser().parse(io.BytesIO(body))


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1100, 100_000])
def test_the_parser_refuses_a_body_nested_too_deep(depth: int) -> None:
    with pytest.raises(JsonTooDeepError):
        JSONParser().parse(io.BytesIO(b"[" * depth + b"]" * depth))


def test_the_parser_takes_a_body_nested_to_the_limit() -> None:
    depth = MAX_JSON_DEPTH
    assert JSONParser().parse(io.BytesIO(b"[" * depth + b"]" * depth)) is not None
