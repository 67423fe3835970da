"""The daily deal's reads (daily.persistence): the one prepared statement on PostgreSQL reads what the ORM's
queries read (the portable path), and the deal's compiled renderings answer what its serializers render."""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from daily import persistence, services
from daily.apis import daily as daily_apis
from daily.models import DailyDeal, ResultCount
from daily.selectors.deals import daily_deal_view, daily_deal_view_of_day
from daily.selectors.leaderboard import LeaderboardCursor, leaderboard_page, leaderboard_querysets
from daily.selectors.par import leaderboard_page_par
from tests.support.daily import NOON, TODAY, Clock, bare_player, play_to_the_end, ranked_submission


def _postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the prepared statements are PostgreSQL's")


@contextmanager
def _portable() -> Iterator[None]:
    """The portable path (the ORM's queries), on this database."""
    prepared = persistence._prepared
    persistence._prepared = lambda: False
    try:
        yield
    finally:
        persistence._prepared = prepared


def _fields(deal: DailyDeal | None) -> dict[str, Any] | None:
    if deal is None:
        return None
    return {field.attname: getattr(deal, field.attname) for field in DailyDeal._meta.concrete_fields}


def _read(read: persistence.DealWithPlayer | None) -> Any:
    if read is None:
        return None
    submission = read.submission
    return (
        _fields(read.deal),
        None
        if submission is None
        else {
            field.attname: getattr(submission, field.attname) for field in submission._meta.concrete_fields
        },
        read.attempts,
    )


def _read_both(player: Any) -> persistence.DealWithPlayer | None:
    """The deal of TODAY with the player's part, read by the prepared statement, checked against the ORM."""
    read = persistence.deal_with_player(day=TODAY, player=player)
    with _portable():
        assert _read(read) == _read(persistence.deal_with_player(day=TODAY, player=player))
        assert _fields(persistence.deal_of_day(TODAY)) == _fields(None if read is None else read.deal)
    return read


@pytest.mark.django_db
def test_the_deal_with_a_players_attempts_and_submission_is_what_the_orm_reads(daily_clock: Clock) -> None:
    _postgresql()
    player, other = bare_player("Ada"), bare_player("Bob")
    assert _read_both(player) is None
    assert persistence.deal_of_day(TODAY) is None
    deal = services.daily_deal_get_or_create(day=TODAY)
    assert (
        _fields(persistence.deal_of_day(TODAY)) == _fields(DailyDeal.objects.get(date=TODAY)) == _fields(deal)
    )
    services.attempt_start(player=other, day=TODAY)
    read = _read_both(player)
    assert read is not None and (read.attempts, read.submission) == ([], None)
    ranked = services.attempt_start(player=player, day=TODAY)
    read = _read_both(player)
    assert read is not None and [attempt.public_id for attempt in read.attempts] == [ranked.public_id]
    play_to_the_end(ranked.game)
    practice = services.attempt_start(player=player, day=TODAY)
    read = _read_both(player)
    assert read is not None and read.submission is not None
    assert [attempt.public_id for attempt in read.attempts] == [ranked.public_id, practice.public_id]


@pytest.mark.django_db
def test_todays_deal_for_a_player_is_one_statement(daily_clock: Clock) -> None:
    _postgresql()
    player = bare_player("Ada")
    services.daily_deal_get_or_create(day=TODAY)
    with CaptureQueriesContext(connection) as queries:
        view = daily_deal_view_of_day(day=TODAY, player=player)
    assert view is not None and view["attempts"] == [] and view["result"] is None
    assert len(queries) == 1


@pytest.mark.django_db
def test_the_deal_views_render_as_their_serializers_do(daily_clock: Clock) -> None:
    player = bare_player("Ada")
    yesterday = TODAY - timedelta(days=1)
    for day in (yesterday, TODAY):
        ranked = services.attempt_start(player=player, day=day)
        play_to_the_end(ranked.game)
        services.attempt_start(player=player, day=day)
    services.daily_par_compute(deal=services.daily_deal_get_or_create(day=yesterday), node_budget=50)
    for day in (yesterday, TODAY):
        deal = services.daily_deal_get_or_create(day=day)
        for who in (None, player, bare_player("Cy")):
            view = daily_deal_view(deal=deal, player=who)
            if who is not None:
                assert daily_deal_view_of_day(day=day, player=who) == view
            serializer = (
                daily_apis.DailyDealOutputSerializer
                if who is None
                else daily_apis.DailyDealForPlayerOutputSerializer
            )
            rendering = daily_apis._DEAL_RENDERING if who is None else daily_apis._DEAL_FOR_PLAYER_RENDERING
            assert rendering(view) == serializer(view).data


def _board_both(
    deal: DailyDeal, cursor: LeaderboardCursor | None, limit: int
) -> list[persistence.BoardEntry]:
    after = (
        None
        if cursor is None
        else (cursor.result, cursor.closed, cursor.turns, cursor.finished_at, cursor.public_id)
    )

    def portable() -> list[Any]:
        return leaderboard_querysets(deal=deal, cursor=cursor)

    read = persistence.board_rows(deal=deal, after=after, limit=limit, portable=portable)
    with _portable():
        assert persistence.board_rows(deal=deal, after=after, limit=limit, portable=portable) == read
        assert persistence.result_counts(deal.pk) == persistence_counts(deal)
    return read


def persistence_counts(deal: DailyDeal) -> list[tuple[int, int]]:
    return list(ResultCount.objects.filter(deal=deal).order_by("-result").values_list("result", "count"))


@pytest.mark.django_db
def test_the_boards_pages_and_counts_are_what_the_orm_reads(daily_clock: Clock) -> None:
    _postgresql()
    deal = services.daily_deal_get_or_create(day=TODAY)
    # Ties in result, closed, turns and finish, so that each part of the order decides somewhere.
    for index, (result, turns, minutes, closed) in enumerate(
        [
            (-3, 4, 0, False),
            (-3, 4, 0, False),
            (-3, 4, 0, True),
            (-3, 2, 5, False),
            (-8, 1, 1, False),
            (0, 9, 2, False),
        ]
    ):
        finished_at = datetime(2026, 3, 5, 8, 0, tzinfo=UTC) + timedelta(minutes=minutes)
        ranked_submission(
            deal, name=f"p{index}", result=result, turns=turns, finished_at=finished_at, closed=closed
        )
    whole = _board_both(deal, None, 100)
    assert len(whole) == 6 and whole[0].result == 0
    assert persistence.result_counts(deal.pk) == [(0, 1), (-3, 4), (-8, 1)]
    for index, entry in enumerate(whole):
        cursor = LeaderboardCursor(
            entry.result, entry.closed, entry.turns, entry.finished_at, entry.public_id
        )
        for limit in (1, 2, 100):
            assert _board_both(deal, cursor, limit) == whole[index + 1 : index + 1 + limit]


@pytest.mark.django_db
def test_a_leaderboard_page_renders_as_its_serializer_does(daily_clock: Clock) -> None:
    deal = services.daily_deal_get_or_create(day=TODAY)
    for index in range(3):
        ranked_submission(deal, name=f"p{index}", result=-index, turns=3, finished_at=NOON, closed=index == 2)
    page = leaderboard_page_par(deal=deal, page=leaderboard_page(deal=deal, cursor=None, limit=2))
    body = {**page, "next": "http://testserver/next"}
    serializer = daily_apis.DailyLeaderboardApi.DailyLeaderboardOutputSerializer
    assert daily_apis._LEADERBOARD_RENDERING(body) == serializer(body).data
