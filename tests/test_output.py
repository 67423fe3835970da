"""Compiled output serializers (kingscorner.api.output) render what the serializers render: for fields of
every kind DRF reads and renders, and for every game view of whole games and of clocked tables."""

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from rest_framework import serializers

from games.apis import responses
from games.apis.serializers import EVENT_RENDERERS, EVENT_RENDERINGS, GameViewSerializer
from games.models import Player
from kingscorner.api.output import compiled
from tests.support.games import SEED, new_caller, play_to_the_end
from tests.support.tables import PERSON, computer, play_table, seat_table


class _Inner(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    tag = serializers.CharField(required=False)


class _Outer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    count = serializers.IntegerField()
    name = serializers.CharField(allow_null=True)
    flag = serializers.BooleanField()
    kind = serializers.ChoiceField(choices=["a", "b"])
    at = serializers.DateTimeField(allow_null=True)
    optional = serializers.CharField(required=False)
    defaulted = serializers.IntegerField(default=7)
    nullable = serializers.IntegerField(allow_null=True)
    inner_number = serializers.IntegerField(source="nested.number")
    whole = serializers.JSONField(source="*")
    numbers = serializers.ListField(child=serializers.IntegerField())
    nested = _Inner()
    items = _Inner(many=True)
    maybe = _Inner(allow_null=True)
    hidden = serializers.CharField(write_only=True)


class _Thing:
    """An object with attributes and a method, as a model instance is."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    def nested(self) -> dict[str, Any]:
        return {"number": "5", "tag": 6}


_BASE: dict[str, Any] = {
    "id": uuid.UUID(int=1),
    "count": "12",
    "name": "ada",
    "flag": "true",
    "kind": "a",
    "at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    "nullable": None,
    "numbers": [1, "2", None],
    "nested": {"number": 3},
    "items": [{"number": 1, "tag": "x"}, {"number": 2}],
    "maybe": None,
    "hidden": "never shown",
}


@pytest.mark.parametrize(
    "instance",
    [
        _BASE,
        {**_BASE, "optional": "here", "defaulted": 3, "name": None, "at": None, "maybe": {"number": 9}},
        {key: value for key, value in _BASE.items() if key not in {"nullable", "items"}} | {"items": []},
        _Thing(**{key: value for key, value in _BASE.items() if key != "nested"}),
    ],
    ids=["mapping", "mapping_with_optionals", "mapping_missing_nullable", "object_with_a_method"],
)
def test_a_compiled_serializer_renders_what_the_serializer_renders(instance: Any) -> None:
    serializer = _Outer()
    assert compiled(serializer)(instance) == serializer.to_representation(instance)
    assert list(compiled(serializer)(instance)) == list(serializer.to_representation(instance))


def test_a_missing_required_value_is_refused_as_the_serializer_refuses_it() -> None:
    instance = {key: value for key, value in _BASE.items() if key != "count"}
    with pytest.raises(KeyError):
        _Outer().to_representation(instance)
    with pytest.raises(KeyError):
        compiled(_Outer())(instance)


@pytest.mark.django_db
def test_a_compiled_serializer_renders_a_model_instance_as_the_serializer_does() -> None:
    class PlayerSerializer(serializers.Serializer[Any]):
        id = serializers.UUIDField()
        name = serializers.CharField()
        created_at = serializers.DateTimeField()

    player = Player.objects.create(name="Ada", name_skeleton="ada", discriminator=4821, token_hash="0" * 64)
    assert compiled(PlayerSerializer())(player) == PlayerSerializer().to_representation(player)


@pytest.fixture
def views_checked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every game view a response renders is rendered by DRF's serializer too, and must be the same; the
    list counts them."""
    checked: list[int] = []
    rendering = responses._GAME_VIEW_RENDERING
    serializer = GameViewSerializer()

    def both(view: Any) -> Any:
        rendered = rendering(view)
        assert rendered == serializer.to_representation(view)
        assert list(rendered) == list(serializer.to_representation(view))
        for event in view["events"]:
            assert EVENT_RENDERINGS[event["type"]](event) == EVENT_RENDERERS[event["type"]].to_representation(
                event
            )
        checked.append(1)
        return rendered

    monkeypatch.setattr(responses, "_GAME_VIEW_RENDERING", both)
    return checked


@pytest.mark.django_db
def test_every_game_view_of_a_whole_game_renders_as_the_serializer_renders_it(
    views_checked: list[int],
) -> None:
    caller = new_caller()
    view = caller.create_game(seed=SEED, opponents=3, target_score=30)
    assert play_to_the_end(caller, view)["status"] == "finished"
    assert len(views_checked) > 10


@pytest.mark.django_db
def test_every_game_view_of_a_clocked_table_renders_as_the_serializer_renders_it(
    views_checked: list[int],
) -> None:
    table = seat_table([PERSON, PERSON, computer()], seed=SEED, turn_seconds=60, target_score=None)
    last = play_table(table, dealer=0)
    assert last[0]["status"] == "finished"
    assert len(views_checked) > 10
