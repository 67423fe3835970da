"""The SQL of the daily deal's reads, written out: the deal of a day with what a player has of it (their
ranked submission and their attempts) in one statement, and the deal of a day alone; each prepared on
PostgreSQL on the connection (games.persistence.prepared_cursor), with the portable path, the ORM's queries,
beside them on any other database. Both paths read the same rows (tests/daily/test_persistence.py).

- `deal_of_day` is one SELECT of the deal by its date (None when it is not made yet).
- `deal_with_player` is one SELECT of the deal, LEFT JOINed to the player's submission at it and to the
  player's attempts at it: a row per attempt (one row without any), in the order the deal view lists them.
"""

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from daily.models import Attempt, DailyDeal, ResultCount, Submission
from games.models import Player
from games.persistence import concrete_fields, instance_from_row, prepared_cursor, quoted, value_from_column

_DEAL_FIELDS = concrete_fields(DailyDeal)
_SUBMISSION_FIELDS = concrete_fields(Submission)
_ATTEMPT_FIELDS = [
    field for field in concrete_fields(Attempt) if field.name in ("public_id", "game", "ranked", "started_at")
]


@dataclass(frozen=True, slots=True)
class AttemptSummary:
    """An attempt as the deal view lists it."""

    public_id: Any
    game_id: Any
    ranked: bool
    started_at: Any


@dataclass(frozen=True, slots=True)
class DealWithPlayer:
    """A day's deal, the player's ranked submission at it (None while there is none recorded) and the
    player's attempts at it, oldest first."""

    deal: DailyDeal
    submission: Submission | None
    attempts: list[AttemptSummary]


def _prepared() -> bool:
    return connection.vendor == "postgresql"


@functools.cache
def _deal_sql() -> str:
    columns = ", ".join(quoted(field.column) for field in _DEAL_FIELDS)
    return f"SELECT {columns} FROM {quoted(DailyDeal._meta.db_table)} WHERE {quoted('date')} = %s"


def deal_of_day(day: date) -> DailyDeal | None:
    """The deal of `day`, or None while it is not made."""
    if not _prepared():
        return DailyDeal.objects.filter(date=day).first()
    with prepared_cursor() as cursor:
        cursor.execute(_deal_sql(), [day])
        row = cursor.fetchone()
    return None if row is None else instance_from_row(DailyDeal, _DEAL_FIELDS, row)


@functools.cache
def _deal_with_player_sql() -> str:
    deal, submission, attempt = (quoted(model._meta.db_table) for model in (DailyDeal, Submission, Attempt))
    columns = ", ".join(
        [f"d.{quoted(field.column)}" for field in _DEAL_FIELDS]
        + [f"s.{quoted(field.column)}" for field in _SUBMISSION_FIELDS]
        + [f"a.{quoted(field.column)}" for field in _ATTEMPT_FIELDS]
    )
    return (
        f"SELECT {columns} FROM {deal} d "
        f"LEFT JOIN {submission} s ON s.{quoted('deal_id')} = d.{quoted('id')} "
        f"AND s.{quoted('player_id')} = %s "
        f"LEFT JOIN {attempt} a ON a.{quoted('deal_id')} = d.{quoted('id')} AND a.{quoted('player_id')} = %s "
        f"WHERE d.{quoted('date')} = %s "
        f"ORDER BY a.{quoted('started_at')}, a.{quoted('id')}"
    )


def deal_with_player(*, day: date, player: Player) -> DealWithPlayer | None:
    """The deal of `day` with the player's submission and attempts at it, or None while it is not made."""
    if not _prepared():
        return _deal_with_player_portable(day=day, player=player)
    with prepared_cursor() as cursor:
        cursor.execute(_deal_with_player_sql(), [player.pk, player.pk, day])
        rows = cursor.fetchall()
    if not rows:
        return None
    deals = len(_DEAL_FIELDS)
    submissions = deals + len(_SUBMISSION_FIELDS)
    first = rows[0]
    deal: DailyDeal = instance_from_row(DailyDeal, _DEAL_FIELDS, first[:deals])
    submission: Submission | None = None
    if first[deals] is not None:
        submission = instance_from_row(Submission, _SUBMISSION_FIELDS, first[deals:submissions])
    attempts = [_attempt(row[submissions:]) for row in rows if row[submissions] is not None]
    return DealWithPlayer(deal=deal, submission=submission, attempts=attempts)


def _attempt(values: Sequence[Any]) -> AttemptSummary:
    public_id, game_id, ranked, started_at = (
        value_from_column(field, value) for field, value in zip(_ATTEMPT_FIELDS, values, strict=True)
    )
    return AttemptSummary(public_id=public_id, game_id=game_id, ranked=ranked, started_at=started_at)


def _deal_with_player_portable(*, day: date, player: Player) -> DealWithPlayer | None:
    deal = DailyDeal.objects.filter(date=day).first()
    if deal is None:
        return None
    attempts = Attempt.objects.filter(player=player, deal=deal).order_by("started_at", "id")
    return DealWithPlayer(
        deal=deal,
        submission=Submission.objects.filter(player=player, deal=deal).first(),
        attempts=[
            AttemptSummary(
                public_id=attempt.public_id,
                game_id=attempt.game_id,
                ranked=attempt.ranked,
                started_at=attempt.started_at,
            )
            for attempt in attempts
        ],
    )


# --- the leaderboard ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """A submission as a leaderboard page shows it, with its player."""

    public_id: Any
    result: int
    closed: bool
    turns: int
    finished_at: Any
    player_id: Any
    player_name: str
    player_discriminator: int


_BOARD_ORDER = ("-result", "closed", "turns", "finished_at", "public_id")


@functools.cache
def _board_sql(part: str) -> str:
    """The board's rows of one deal in its order, from its index: all of them (`whole`), the rest of a result
    group after a cursor (`group`), or the results below one (`below`)."""
    submission, player = quoted(Submission._meta.db_table), quoted(Player._meta.db_table)
    columns = ", ".join(
        [f"s.{quoted(name)}" for name in ("public_id", "result", "closed", "turns", "finished_at")]
        + [f"p.{quoted(name)}" for name in ("id", "name", "discriminator")]
    )
    where = f"s.{quoted('deal_id')} = %s"
    if part == "group":
        keys = ", ".join(f"s.{quoted(name)}" for name in ("closed", "turns", "finished_at", "public_id"))
        where += f" AND s.{quoted('result')} = %s AND ({keys}) > (%s, %s, %s, %s)"
    elif part == "below":
        where += f" AND s.{quoted('result')} < %s"
    order = ", ".join(
        f"s.{quoted(name.lstrip('-'))}{' DESC' if name.startswith('-') else ''}" for name in _BOARD_ORDER
    )
    return (
        f"SELECT {columns} FROM {submission} s JOIN {player} p ON p.{quoted('id')} = s.{quoted('player_id')} "
        f"WHERE {where} ORDER BY {order} LIMIT %s"
    )


def board_rows(
    *,
    deal: DailyDeal,
    after: tuple[int, bool, int, Any, Any] | None,
    limit: int,
    portable: Callable[[], list[QuerySet[Submission]]],
) -> list[BoardEntry]:
    """Up to `limit` entries of the deal's board in its order, after the entry `after` (its result, closed,
    turns, finished_at and public_id) when one is given. `portable` gives the ORM's querysets of the same
    ranges (daily.selectors.leaderboard.leaderboard_querysets), read on any other database."""
    if not _prepared():
        rows: list[BoardEntry] = []
        for queryset in portable():
            rows += [_board_entry(submission) for submission in queryset[: limit - len(rows)]]
            if len(rows) == limit:
                break
        return rows
    if after is None:
        parts: list[tuple[str, list[Any]]] = [("whole", [deal.pk])]
    else:
        result, closed, turns, finished_at, public_id = after
        parts = [
            ("group", [deal.pk, result, closed, turns, finished_at, public_id]),
            ("below", [deal.pk, result]),
        ]
    entries: list[BoardEntry] = []
    with prepared_cursor() as cursor:
        for part, params in parts:
            cursor.execute(_board_sql(part), [*params, limit - len(entries)])
            entries += [BoardEntry(*row) for row in cursor.fetchall()]
            if len(entries) == limit:
                break
    return entries


def _board_entry(submission: Submission) -> BoardEntry:
    return BoardEntry(
        public_id=submission.public_id,
        result=submission.result,
        closed=submission.closed,
        turns=submission.turns,
        finished_at=submission.finished_at,
        player_id=submission.player.id,
        player_name=submission.player.name,
        player_discriminator=submission.player.discriminator,
    )


@functools.cache
def _counts_sql() -> str:
    table = quoted(ResultCount._meta.db_table)
    return (
        f"SELECT {quoted('result')}, {quoted('count')} FROM {table} "
        f"WHERE {quoted('deal_id')} = %s ORDER BY {quoted('result')} DESC"
    )


def result_counts(deal_id: Any) -> list[tuple[int, int]]:
    """The deal's (result, count) rows, higher results first."""
    if not _prepared():
        counts = (
            ResultCount.objects.filter(deal_id=deal_id).order_by("-result").values_list("result", "count")
        )
        return list(counts)
    with prepared_cursor() as cursor:
        cursor.execute(_counts_sql(), [deal_id])
        return [(int(result), int(count)) for result, count in cursor.fetchall()]
