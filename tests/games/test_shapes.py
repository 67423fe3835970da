"""The views of games/shapes.py are what the API renders: each shape names exactly the members the
serializer that renders it reads (and so the schema's), so that a member added to one and not the other fails
here rather than at render time."""

from typing import Any, get_args

import pytest
from rest_framework import serializers

from games.apis import serializers as rendering
from games.apis.games import GameCollectionApi, GameEventsApi
from games.apis.hint import GameHintApi
from games.engine import HandResult
from games.shapes import (
    EventPage,
    EventView,
    GamePlayer,
    GameSummary,
    GameView,
    Hint,
    Invitation,
    SeatView,
    StartedSeat,
    TableView,
)


def _keys(shape: Any) -> set[str]:
    return set(shape.__required_keys__ | shape.__optional_keys__)


def _fields(serializer: type[serializers.Serializer[Any]]) -> set[str]:
    """The members the serializer reads (a field may read another one's: the invitation's URL its code)."""
    return {name if field.source == "*" else str(field.source) for name, field in serializer().fields.items()}


@pytest.mark.parametrize(
    ("shape", "serializer"),
    [
        (GameView, rendering.GameViewSerializer),
        (GamePlayer, rendering.GamePlayerSerializer),
        (TableView, rendering.TableSerializer),
        (HandResult, rendering.HandResultSerializer),
        (GameSummary, GameCollectionApi.GameSummarySerializer),
        (Hint, GameHintApi.GameHintOutputSerializer),
        (SeatView, rendering.SeatSerializer),
        (Invitation, rendering.InvitationSerializer),
        (StartedSeat, rendering.StartedSeatSerializer),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_a_view_shape_names_the_members_its_serializer_renders(
    shape: Any, serializer: type[serializers.Serializer[Any]]
) -> None:
    assert _keys(shape) == _fields(serializer)


def test_an_event_page_is_rendered_as_items_a_link_and_where_it_ends() -> None:
    """The selector's page (its events, the last seq, whether more follow) is rendered as every list's page
    is: `items`, `next` (a link, null on the last page) and `more_after` (the last seq)."""
    assert _keys(EventPage) == {"events", "last", "has_more"}
    assert _fields(GameEventsApi.GameEventsOutputSerializer) == {"items", "next", "more_after"}


def test_each_event_view_shape_names_the_members_of_its_event_serializer() -> None:
    shapes = {get_args(shape.__annotations__["type"])[0]: shape for shape in get_args(EventView)}
    assert set(shapes) == set(rendering.EVENT_SERIALIZERS)
    for kind, shape in shapes.items():
        assert _keys(shape) == _fields(rendering.EVENT_SERIALIZERS[kind]), kind
