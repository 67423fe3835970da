"""The shapes of what `games` shows: the views its selectors build from the engine's observation and events
(games.engine.shapes), which the services hand back and the API renders. Each is the plain data of one
response body before its serializer renders it (games/apis/serializers.py)."""

from datetime import datetime
from typing import Any, Literal, NotRequired, TypedDict

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


# The table's own events, which `games` writes to the log besides the engine's: people taking and leaving
# seats, the table starting, a person's turn played for them once the clock ran out. They name no card.
class SeatTakenEvent(TypedDict):
    type: Literal["seat_taken"]
    seat: int
    name: str


class SeatLeftEvent(TypedDict):
    """`level` and `computer` say which computer took the seat; a waiting table's seat is free again
    (`level` None, no `computer`)."""

    type: Literal["seat_left"]
    seat: int
    name: str
    level: str | None
    computer: NotRequired[str]


class StartedSeat(TypedDict):
    seat: int
    kind: Literal["person", "computer"]
    name: str
    level: str | None


class GameStartedEvent(TypedDict):
    type: Literal["game_started"]
    seats: list[StartedSeat]


class TurnTimedOutEvent(TypedDict):
    type: Literal["turn_timed_out"]
    seat: int


TableEvent = SeatTakenEvent | SeatLeftEvent | GameStartedEvent | TurnTimedOutEvent


class DealEventView(LoggedEvent, DealEvent): ...


class TurnStartEventView(LoggedEvent, TurnStartEvent): ...


class DrawEventView(LoggedEvent, DrawEvent): ...


class PlayEventView(LoggedEvent, PlayEvent): ...


class MovePileEventView(LoggedEvent, MovePileEvent): ...


class EndTurnEventView(LoggedEvent, EndTurnEvent): ...


class HandOverEventView(LoggedEvent, HandOverEvent): ...


class GameOverEventView(LoggedEvent, GameOverEvent): ...


class SeatTakenEventView(LoggedEvent, SeatTakenEvent): ...


class SeatLeftEventView(LoggedEvent, SeatLeftEvent): ...


class GameStartedEventView(LoggedEvent, GameStartedEvent): ...


class TurnTimedOutEventView(LoggedEvent, TurnTimedOutEvent): ...


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
    | SeatTakenEventView
    | SeatLeftEventView
    | GameStartedEventView
    | TurnTimedOutEventView
)


class EventPage(TypedDict):
    """A page of the event log; `last` is the seq to read after next time."""

    events: list[EventView]
    last: int
    has_more: bool


class GamePlayer(TypedDict):
    """`name` is None for a person's seat not taken yet."""

    seat: int
    name: str | None
    kind: Literal["human", "computer"]
    level: str | None
    hand_count: int
    score: int


class TableView(TypedDict):
    stock: int
    piles: dict[str, list[str]]


class SeatView(TypedDict):
    """A seat at the table, as a view lists it; `name` is None while a person's seat is free."""

    seat: int
    kind: Literal["person", "computer"]
    name: str | None
    level: str | None
    you: bool


class Invitation(TypedDict):
    """The invitation link; `url` is its path until the API makes it absolute for the request."""

    code: str
    url: str


class TableMembers(TypedDict):
    """What a game view says of the table itself: its seats, the invitation, the clock and the rematch;
    `turn_deadline` is written as the API writes a time."""

    seats: list[SeatView]
    invitation: Invitation | None
    turn_seconds: int | None
    turn_deadline: str | None
    rematch: str | None


class GameView(TableMembers):
    """A game as its player's seat sees it; `rules` is Rules.to_json()."""

    id: str
    version: int
    status: str
    closed_reason: str | None
    rules: dict[str, Any]
    target_score: int | None
    hand_number: int
    dealer: int | None
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
    your_seat: int
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
