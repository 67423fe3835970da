"""The views of daily/shapes.py are what the daily API renders: each shape names the members of the
serializer that renders it (and so of the schema), so that a member added to one and not the other fails
here rather than at render time."""

from typing import Any

import pytest
from rest_framework import serializers

from daily.apis import daily as apis
from daily.shapes import (
    AttemptView,
    DealView,
    HistoryEntryWithPar,
    HistoryWithPar,
    LeaderboardEntryWithPar,
    LeaderboardPageWithPar,
    Opponent,
    ParReplay,
    ParSummary,
    ReplayStep,
    SeatView,
    Standing,
    StandingWithPar,
)


def _keys(shape: Any) -> set[str]:
    return set(shape.__required_keys__ | shape.__optional_keys__)


def _fields(serializer: serializers.Serializer[Any]) -> set[str]:
    return set(serializer.fields)


HISTORY = apis.PlayerDailyHistoryApi.PlayerDailyHistoryOutputSerializer


@pytest.mark.parametrize(
    ("shape", "serializer"),
    [
        (DealView, apis.DailyDealForPlayerOutputSerializer()),
        (Opponent, apis.DailyOpponentSerializer()),
        (AttemptView, apis.DailyAttemptSummarySerializer()),
        (Standing, apis.DailyStandingSerializer()),
        (ParSummary, apis.DailyParSerializer()),
        (LeaderboardEntryWithPar, apis.DailyLeaderboardEntrySerializer()),
        (HistoryWithPar, HISTORY()),
        (HistoryEntryWithPar, HISTORY.PlayerDailyDaySerializer()),
        (ParReplay, apis.DailyParApi.DailyParReplayOutputSerializer()),
        (SeatView, apis.DailyParViewSerializer()),
        (ReplayStep, apis.DailyParStepSerializer()),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_a_view_shape_names_the_members_its_serializer_renders(
    shape: Any, serializer: serializers.Serializer[Any]
) -> None:
    assert _keys(shape) == _fields(serializer)


def test_a_leaderboard_page_is_rendered_with_a_link_in_place_of_its_cursor() -> None:
    rendered = _fields(apis.DailyLeaderboardApi.DailyLeaderboardOutputSerializer())
    # Its entries are rendered as `items`, the one name of every list's page.
    assert (_keys(LeaderboardPageWithPar) - {"next_cursor", "entries"}) | {"next", "items"} == rendered


def test_your_place_renders_part_of_your_standing_with_par() -> None:
    """Your place on the board leaves out the turns and finish time that the deal's `result` shows."""
    rendered = _fields(apis.DailyLeaderboardMeApi.DailyLeaderboardMeOutputSerializer())
    assert rendered == _keys(StandingWithPar) - {"turns", "finished_at"}
