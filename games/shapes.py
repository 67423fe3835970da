"""The shapes of what `games` shows: the views its selectors build from the engine's observation and events
(games.engine.shapes), which the services hand back and the API renders. Each is the plain data of one
response body before its serializer renders it (games/apis/serializers.py)."""

from datetime import datetime
from typing import Any, Literal, TypedDict

from games.engine import HandResult, MoveJson
from games.engine.shapes import (
    DealEvent,
    DrawEvent,
    EndTurnEvent,
    GameOverEvent,
    HandOverEvent,
    MovePileEvent,
    PlayEvent,
    TurnStartEvent,
)


class LoggedEvent(TypedDict):
    """Where an event stands in a game's log: its number and the version of the game it brought about."""

    seq: int
    version: int


class DealEventView(LoggedEvent, DealEvent): ...


class TurnStartEventView(LoggedEvent, TurnStartEvent): ...


class DrawEventView(LoggedEvent, DrawEvent): ...


class PlayEventView(LoggedEvent, PlayEvent): ...


class MovePileEventView(LoggedEvent, MovePileEvent): ...


class EndTurnEventView(LoggedEvent, EndTurnEvent): ...


class HandOverEventView(LoggedEvent, HandOverEvent): ...


class GameOverEventView(LoggedEvent, GameOverEvent): ...


# A logged event as a seat may see it (event_view): the engine's event with its place in the log.
EventView = (
    DealEventView
    | TurnStartEventView
    | DrawEventView
    | PlayEventView
    | MovePileEventView
    | EndTurnEventView
    | HandOverEventView
    | GameOverEventView
)


class EventPage(TypedDict):
    """A page of the event log; `last` is the seq to read after next time."""

    events: list[EventView]
    last: int
    has_more: bool


class GamePlayer(TypedDict):
    seat: int
    name: str
    kind: Literal["human", "computer"]
    level: str | None
    hand_count: int
    score: int


class TableView(TypedDict):
    stock: int
    piles: dict[str, list[str]]


class GameView(TypedDict):
    """A game as its player's seat sees it; `rules` is Rules.to_json()."""

    id: str
    version: int
    status: str
    closed_reason: str | None
    rules: dict[str, Any]
    target_score: int | None
    hand_number: int
    dealer: int
    current_seat: int | None
    your_seat: int
    is_your_turn: bool
    players: list[GamePlayer]
    hand: list[str]
    table: TableView
    legal_moves: list[MoveJson]
    events: list[EventView]
    more_events_after: int | None
    hand_result: HandResult | None
    winners: list[int] | None
    seed: str | None


class GameSummary(TypedDict):
    """A game in its player's list, without the cards."""

    id: str
    version: int
    status: str
    closed_reason: str | None
    rules: dict[str, Any]
    target_score: int | None
    hand_number: int
    is_your_turn: bool
    players: list[GamePlayer]
    winners: list[int] | None
    created_at: datetime
    updated_at: datetime


class Hint(TypedDict):
    """The rest of the player's turn as sharp would play it, at the game's version."""

    version: int
    moves: list[MoveJson]


class PositionAnalysis(TypedDict):
    legal_moves: list[MoveJson]
    best_turn: list[MoveJson]
