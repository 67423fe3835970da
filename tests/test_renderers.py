"""The JSON renderer (kingscorner/api/renderers.py): orjson writes the API's JSON, and its bytes are DRF's
renderer's for every value the API writes (and for those orjson cannot write, which DRF's renderer writes)."""

import datetime
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from rest_framework import renderers as drf_renderers
from rest_framework import serializers
from rest_framework.test import APIClient
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from kingscorner.api.renderers import JSONRenderer

_SERIALIZER: serializers.Serializer[Any] = serializers.Serializer()


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
    ReturnDict(
        {"from": "a serializer", "rows": ReturnList([{"x": 1}], serializer=_SERIALIZER)},
        serializer=_SERIALIZER,
    ),
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
