"""A day's leaderboard: its status, keyset pages with their cursor, and a result's standing.

Ranks come from the per-day result counts: a submission's rank is 1 + the number of submissions with a
strictly higher result, a sum over at most a few hundred small rows, whatever the number of submissions.
Leaderboard pages are read by keyset from the index on (deal, -result, closed, turns, finished_at,
public_id)."""

import base64
import binascii
import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import BooleanField, QuerySet
from django.db.models.expressions import RawSQL

from daily import clock, persistence
from daily.errors import NoRankedResult
from daily.models import DailyDeal, Submission
from daily.persistence import BoardEntry
from daily.selectors.submissions import player_submission, unrecorded_counts
from daily.shapes import LeaderboardPage, Standing
from games.errors import InvalidCursor, page_limit
from games.models import Player, player_display_name
from kingscorner import json_depth

LEADERBOARD_LIMIT_DEFAULT = 50


LEADERBOARD_LIMIT_MAX = 100


INTEGER_MIN, INTEGER_MAX = -(2**31), 2**31 - 1


LEADERBOARD_STATUSES = ["open", "closing", "final"]


def leaderboard_status(*, deal: DailyDeal) -> str:
    """`open` while ranked attempts may still finish, `closing` from the finishing deadline until the close
    job has recorded every unfinished one, then `final`."""
    if not clock.is_over(deal.date):
        return "open"
    return "final" if deal.attempts_closed_at is not None else "closing"


@dataclass(frozen=True)
class LeaderboardCursor:
    """The last entry of a page; the next page starts after it in the leaderboard's order."""

    result: int
    closed: bool
    turns: int
    finished_at: datetime
    public_id: uuid.UUID

    def encode(self) -> str:
        text = json.dumps(
            [self.result, self.closed, self.turns, self.finished_at.isoformat(), str(self.public_id)]
        )
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> "LeaderboardCursor":
        invalid = InvalidCursor("The cursor is not one this API gave.")
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            result, closed, turns, finished_at, public_id = json_depth.loads(raw)
            if not isinstance(public_id, str):
                raise TypeError("a public id is a string")
            at = datetime.fromisoformat(finished_at)
            # The cursors given out name their time in UTC; one at another offset (which PostgreSQL may not
            # even take: ±16:00 and beyond) or none is not one of them.
            if at.utcoffset() != timedelta(0):
                raise ValueError("a cursor's time is in UTC")
            cursor = cls(result, closed, turns, at, uuid.UUID(public_id))
        # JsonTooDeep is a ValueError: a cursor this API gave nests one level.
        except (binascii.Error, ValueError, TypeError, OverflowError) as error:
            raise invalid from error
        # The values go to the database as they are: each must fit its column, or the query would fail.
        within = (
            (result, INTEGER_MIN, INTEGER_MAX),
            (turns, 0, INTEGER_MAX),
        )
        if type(closed) is not bool or any(
            type(value) is not int or not low <= value <= high for value, low, high in within
        ):
            raise invalid
        return cursor


def leaderboard_limit(value: str | None) -> int:
    return page_limit(value, default=LEADERBOARD_LIMIT_DEFAULT, maximum=LEADERBOARD_LIMIT_MAX)


def _better_counts(*, deal: DailyDeal) -> tuple[dict[int, int], int]:
    """For each result reached on the deal, how many submissions did strictly better; and the total."""
    better: dict[int, int] = {}
    total = 0
    for result, count in persistence.result_counts(deal.pk):
        better[result] = total
        total += count
    return better, total


def leaderboard_querysets(*, deal: DailyDeal, cursor: LeaderboardCursor | None) -> list[QuerySet[Submission]]:
    """What a page is read from, in order: without a cursor the whole board; after one, the rest of the
    cursor's result group and then the lower results, each one range of the board's index."""
    board = (
        Submission.objects.filter(deal=deal)
        .select_related("player")
        .only(
            "public_id",
            "result",
            "closed",
            "turns",
            "finished_at",
            "player__id",
            "player__name",
            "player__discriminator",
        )
        .order_by("-result", "closed", "turns", "finished_at", "public_id")
    )
    if cursor is None:
        return [board]
    # A row comparison, so that PostgreSQL reads the rest of the group as an index range, not a filter. Raw
    # SQL gets no field's conversion, so the finish time is written as the column stores it: on SQLite that
    # is naive UTC text, and an aware value would compare unequal to it.
    table = Submission._meta.db_table
    after = RawSQL(
        f'("{table}"."closed", "{table}"."turns", "{table}"."finished_at", "{table}"."public_id")'
        " > (%s, %s, %s, %s)",
        (
            cursor.closed,
            cursor.turns,
            connection.ops.adapt_datetimefield_value(cursor.finished_at),
            Submission._meta.get_field("public_id").get_db_prep_value(cursor.public_id, connection),
        ),
        output_field=BooleanField(),
    )
    return [board.filter(after, result=cursor.result), board.filter(result__lt=cursor.result)]


def _board_rows(*, deal: DailyDeal, cursor: LeaderboardCursor | None, limit: int) -> list[BoardEntry]:
    after = None
    if cursor is not None:
        after = (cursor.result, cursor.closed, cursor.turns, cursor.finished_at, cursor.public_id)
    return persistence.board_rows(
        deal=deal, after=after, limit=limit, portable=lambda: leaderboard_querysets(deal=deal, cursor=cursor)
    )


def leaderboard_page(*, deal: DailyDeal, cursor: str | None, limit: int) -> LeaderboardPage:
    """One page of the deal's leaderboard: higher results first; equal results share a rank and are
    ordered finished before closed at the deadline, then by fewer turns, then earlier finish. `next_cursor`
    is None on the last page. While the day is `closing`, the attempts the close job has not recorded yet
    are not on its pages, but are in its `count` (as in every other view of the day)."""
    after = None if cursor is None else LeaderboardCursor.decode(cursor)
    rows = _board_rows(deal=deal, cursor=after, limit=limit + 1)
    better, count = _better_counts(deal=deal)
    count += unrecorded_counts([deal]).get(deal.pk, 0)
    page = rows[:limit]
    next_cursor = None
    if len(rows) > limit:
        last = page[-1]
        next_cursor = LeaderboardCursor(
            last.result, last.closed, last.turns, last.finished_at, last.public_id
        ).encode()
    return {
        "date": deal.date,
        "status": leaderboard_status(deal=deal),
        "count": count,
        "entries": [
            {
                "rank": better.get(entry.result, 0) + 1,
                "player": {
                    "id": entry.player_id,
                    "name": entry.player_name,
                    "discriminator": str(entry.player_discriminator),
                    "display_name": player_display_name(entry.player_name, entry.player_discriminator),
                },
                "result": entry.result,
                "turns": entry.turns,
                "finished_at": entry.finished_at,
                "closed": entry.closed,
            }
            for entry in page
        ],
        "next_cursor": next_cursor,
    }


def _percentile(*, better: int, count: int) -> float:
    """The percentage of the day's submissions with a result at or below this one, this one included."""
    return round(100 * (count - better) / count, 1)


def better_and_count(day_counts: list[tuple[int, int]], result: int) -> tuple[int, int]:
    """From a day's (result, count) rows: how many submissions did strictly better than `result`, and how
    many there are in all."""
    better = sum(count for other, count in day_counts if other > result)
    return better, sum(count for _, count in day_counts)


def submission_standing(*, submission: Submission, deal: DailyDeal) -> Standing:
    """Where a submission stands on `deal`, its day: ranked among the recorded results; while the day is
    `closing`, its count holds every attempt the close job has not recorded yet (this one too, when it is
    one of them), as the leaderboard's does."""
    day_counts = persistence.result_counts(submission.deal_id)
    better, count = better_and_count(day_counts, submission.result)
    count += unrecorded_counts([deal]).get(deal.pk, 0)
    return {
        "rank": better + 1,
        "result": submission.result,
        "turns": submission.turns,
        "finished_at": submission.finished_at,
        "closed": submission.closed,
        "percentile": _percentile(better=better, count=count),
        "count": count,
    }


def leaderboard_me(*, deal: DailyDeal, player: Player) -> Standing:
    submission = player_submission(player=player, deal=deal)
    if submission is None:
        raise NoRankedResult(f"You have no ranked result on the deal of {deal.date.isoformat()}.")
    return submission_standing(submission=submission, deal=deal)
