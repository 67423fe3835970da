"""The API's JSON is written by orjson and read by orjson, and nothing else changes: the renderer's bytes are
DRF's renderer's for every value the API writes (and for those orjson cannot write, which DRF's renderer
writes), and the parser reads every body into what DRF's parser reads, refusing what it refuses."""

import datetime
import io
import json
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from rest_framework import exceptions
from rest_framework import parsers as drf_parsers
from rest_framework import renderers as drf_renderers
from rest_framework.test import APIClient
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from kingscorner.api.parsers import JSONParser, JsonTooDeepError
from kingscorner.api.renderers import JSONRenderer
from kingscorner.json_depth import MAX_JSON_DEPTH


@dataclass
class Point:
    x: int


WRITTEN = [
    {"id": uuid.UUID(int=7), "name": "Ada", "n": 3, "ok": True, "none": None, "list": [1, "two", [3]]},
    {"unicode": "Åsa 王 🂡", "control": "tab\tnew\nline \x00 \x1f", "quote": '"\\/'},
    {"separators": "a\u2028b\u2029c", "key\u2028": 1},
    {"when": datetime.datetime(2026, 12, 1, 5, 6, 7, 123456, tzinfo=datetime.UTC)},
    {
        "day": datetime.date(2026, 12, 1),
        "time": datetime.time(5, 6, 7, 890123),
        "span": datetime.timedelta(1),
    },
    {"price": Decimal("1.50"), "tuple": (1, 2), "big": 2**64 - 1, "small": -(2**63)},
    ReturnDict({"from": "a serializer", "rows": ReturnList([{"x": 1}], serializer=None)}, serializer=None),
    # What orjson cannot write as the standard library does; DRF's renderer writes it.
    {1: "int key", None: "null key"},
    {"huge": 2**64, "negative": -(2**63) - 1},
    [],
    "just a string",
    0,
]


@pytest.mark.parametrize("value", WRITTEN, ids=range(len(WRITTEN)))
def test_the_renderer_writes_what_drfs_writes(value: Any) -> None:
    assert JSONRenderer().render(value) == drf_renderers.JSONRenderer().render(value)


def test_an_indented_answer_is_written_as_drf_writes_it() -> None:
    value = {"a": [1, {"b": "c"}]}
    media = "application/json; indent=4"
    assert JSONRenderer().render(value, media) == drf_renderers.JSONRenderer().render(value, media)
    assert b"\n    " in JSONRenderer().render(value, media)


def test_nothing_to_write_is_an_empty_body() -> None:
    assert JSONRenderer().render(None) == b""


def test_a_type_neither_can_write_fails_as_before() -> None:
    with pytest.raises(TypeError):
        drf_renderers.JSONRenderer().render({"point": Point(1)})
    with pytest.raises(TypeError):
        JSONRenderer().render({"point": Point(1)})


@pytest.mark.django_db
def test_the_apis_answers_are_drfs_bytes() -> None:
    client = APIClient()
    player = client.post("/api/v1/players", {"name": "Åsa 王"}, format="json")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {player.json()['token']}")
    game = client.post("/api/v1/games", {"level": "normal"}, format="json")
    moved = client.post(
        f"/api/v1/games/{game.json()['id']}/moves", {"moves": [{"type": "end_turn"}]}, format="json"
    )
    refused = client.post(f"/api/v1/games/{game.json()['id']}/moves", {"moves": []}, format="json")
    responses = [player, game, moved, refused, client.get("/api/v1/players/me"), client.get("/api/v1/daily")]
    assert [response.status_code for response in responses] == [201, 201, 200, 400, 200, 200]
    for response in responses:
        assert response.content == drf_renderers.JSONRenderer().render(response.data)


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
