"""The shapes of what `daily` shows: the views its selectors build (a day's deal, leaderboard pages and
standings, a player's history, par and its replay), which the API renders. The reads that add the day's par
(daily/selectors/par.py) extend each view with its par members; so that a view's list holds the entries of
its own kind, a page and a history keep their lists out of their common part."""

import uuid
from datetime import date, datetime
from typing import Any, NotRequired, TypedDict

from games.engine import MoveJson
from games.shapes import TableView


class Opponent(TypedDict):
    """A computer player of the deal, by seat from 1."""

    seat: int
    name: str
    level: str


class ParSummary(TypedDict):
    """The day's par: the result of the best line found, and how it was found."""

    result: int
    turns: int
    finished: bool
    method: str
    node_budget: int
    nodes: int
    computed_at: datetime


class Standing(TypedDict):
    """Where a ranked result stands on its day."""

    rank: int
    result: int
    turns: int
    finished_at: datetime
    closed: bool
    percentile: float
    count: int


class StandingWithPar(Standing):
    """A standing with the day's par; the par members are None until par is published."""

    par: int | None
    vs_par: int | None
    par_reached: int | None


class AttemptView(TypedDict):
    id: uuid.UUID
    game_id: uuid.UUID
    ranked: bool
    started_at: datetime


class DealView(TypedDict):
    """A day's deal; `attempts` and `result` are the player's, only when a player asks."""

    date: date
    number: int
    rules: dict[str, Any]
    opponents: list[Opponent]
    commitment: str
    seed: str | None
    seed_revealed_at: datetime
    next_deal_in: int
    par: ParSummary | None
    attempts: NotRequired[list[AttemptView]]
    result: NotRequired[Standing | None]


class LeaderboardPlayer(TypedDict):
    id: uuid.UUID
    name: str
    discriminator: str
    display_name: str


class LeaderboardEntry(TypedDict):
    rank: int
    player: LeaderboardPlayer
    result: int
    turns: int
    finished_at: datetime
    closed: bool


class LeaderboardEntryWithPar(LeaderboardEntry):
    vs_par: int | None


class _LeaderboardPageHead(TypedDict):
    date: date
    status: str
    count: int
    next_cursor: str | None


class LeaderboardPage(_LeaderboardPageHead):
    """One page of a day's leaderboard; `next_cursor` is None on the last page."""

    entries: list[LeaderboardEntry]


class LeaderboardPageWithPar(_LeaderboardPageHead):
    """A leaderboard page with the day's par and how many reached it (None until par is published)."""

    entries: list[LeaderboardEntryWithPar]
    par: int | None
    par_reached: int | None


class HistoryEntry(TypedDict):
    """One ranked result of the player's, with the rank it has now."""

    date: date
    number: int
    result: int
    rank: int
    count: int
    closed: bool


class HistoryEntryWithPar(HistoryEntry):
    par: int | None
    vs_par: int | None


class _HistoryTotals(TypedDict):
    current_streak: int
    best_streak: int
    mean_result: float | None
    share_text: str | None


class History(_HistoryTotals):
    """A player's ranked results, newest first, with the streaks, the mean and the share text."""

    history: list[HistoryEntry]


class HistoryWithPar(_HistoryTotals):
    history: list[HistoryEntryWithPar]


class SeatView(TypedDict):
    """The table as the daily player (seat 0) saw it: their own hand, every hand's size, the piles and the
    stock's size."""

    current_seat: int | None
    hand: list[str]
    hand_counts: list[int]
    table: TableView


class ReplayStep(SeatView):
    """A move of the par line's hand, anyone's, with the table as the player saw it after it."""

    seat: int
    move: MoveJson


class ParReplay(TypedDict):
    """The par line as a replay: the deal as the player saw it, then every move of the hand."""

    date: date
    number: int
    seed: str
    rules: dict[str, Any]
    opponents: list[Opponent]
    par: ParSummary
    start: SeatView
    steps: list[ReplayStep]
