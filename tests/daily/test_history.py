"""A player's daily history: ranks, streaks of ranked finishes, mean result and the share text."""

from datetime import date, timedelta

import pytest
from django.test import Client

from daily import services
from daily.selectors.history import daily_streaks, share_text
from games.models import Player
from tests.support.daily import NOON, TODAY, Clock, MakePlayer, play_to_the_end, ranked_submission


def _finish(player: Player, day: date, result: int) -> None:
    deal = services.daily_deal_get_or_create(day=day)
    ranked_submission(deal, name=player.name, result=result, turns=6, finished_at=NOON, player=player)


def _days(*offsets: int) -> list[date]:
    return sorted(TODAY - timedelta(days=offset) for offset in offsets)


@pytest.mark.parametrize(
    ("offsets", "expected"),
    [
        ((), (0, 0)),
        ((0,), (1, 1)),
        ((1,), (1, 1)),
        ((2,), (0, 1)),
        ((0, 1, 2), (3, 3)),
        ((1, 2, 3, 5, 6), (3, 3)),
        ((0, 2, 3, 4, 5), (1, 4)),
        ((3, 4, 5, 6), (0, 4)),
    ],
)
def test_the_current_streak_reaches_today_or_yesterday_and_the_best_is_the_longest_run(
    offsets: tuple[int, ...], expected: tuple[int, int]
) -> None:
    assert daily_streaks(_days(*offsets), today=TODAY) == expected


def test_share_text_names_the_day_result_and_rank_only() -> None:
    assert (
        share_text(number=333, result=14, rank=3, count=120) == "Kings Corner Daily #333: +14 · rank 3 of 120"
    )
    assert share_text(number=7, result=-5, rank=9, count=9) == "Kings Corner Daily #7: -5 · rank 9 of 9"


@pytest.mark.django_db
def test_history_lists_ranked_results_newest_first_with_streaks_mean_and_share(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player("Ada")
    rival, _ = make_player("Bo")
    for offset, result in [(0, 14), (1, -3), (2, 5), (4, 8)]:
        _finish(player, TODAY - timedelta(days=offset), result)
    _finish(rival, TODAY, 20)
    body = client.get("/api/v1/players/me/daily").json()
    assert body["history"] == [
        {
            "date": "2026-03-05",
            "number": 64,
            "result": 14,
            "rank": 2,
            "count": 2,
            "closed": False,
            "par": None,
            "vs_par": None,
        },
        {
            "date": "2026-03-04",
            "number": 63,
            "result": -3,
            "rank": 1,
            "count": 1,
            "closed": False,
            "par": None,
            "vs_par": None,
        },
        {
            "date": "2026-03-03",
            "number": 62,
            "result": 5,
            "rank": 1,
            "count": 1,
            "closed": False,
            "par": None,
            "vs_par": None,
        },
        {
            "date": "2026-03-01",
            "number": 60,
            "result": 8,
            "rank": 1,
            "count": 1,
            "closed": False,
            "par": None,
            "vs_par": None,
        },
    ]
    assert (body["current_streak"], body["best_streak"]) == (3, 3)
    assert body["mean_result"] == 6.0
    assert body["share_text"] == "Kings Corner Daily #64: +14 · rank 2 of 2"


@pytest.mark.django_db
def test_archive_play_and_unfinished_or_practice_attempts_never_count(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    _finish(player, TODAY - timedelta(days=1), 4)
    play_to_the_end(services.attempt_start(player=player, day=TODAY - timedelta(days=1)).game)
    play_to_the_end(services.attempt_start(player=player, day=TODAY - timedelta(days=2)).game)
    services.attempt_start(player=player, day=TODAY)
    body = client.get("/api/v1/players/me/daily").json()
    assert [entry["date"] for entry in body["history"]] == ["2026-03-04"]
    assert (body["current_streak"], body["best_streak"]) == (1, 1)


@pytest.mark.django_db
def test_a_new_player_has_an_empty_history(make_player: MakePlayer, client: Client) -> None:
    _, player_client = make_player()
    assert player_client.get("/api/v1/players/me/daily").json() == {
        "history": [],
        "current_streak": 0,
        "best_streak": 0,
        "mean_result": None,
        "share_text": None,
    }
    assert client.get("/api/v1/players/me/daily").status_code == 401
