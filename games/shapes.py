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
# seats, an absent person's seat replaced, the table starting, a person's turn played for them once the clock
# ran out. They name no card.
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


class SeatReplacedEvent(TypedDict):
    """Another person at the table (`by`, their seat) handed the seat of its absent person (`name`) to a
    computer (`computer`, at `level`)."""

    type: Literal["seat_replaced"]
    seat: int
    name: str
    level: str
    computer: str
    by: int


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


class RematchEvent(TypedDict):
    """The last event of a finished game whose rematch was created: the game the table went on to."""

    type: Literal["rematch"]
    new_game: str


TableEvent = (
    SeatTakenEvent | SeatLeftEvent | SeatReplacedEvent | GameStartedEvent | TurnTimedOutEvent | RematchEvent
)


class DealEventView(LoggedEvent, DealEvent): ...


class TurnStartEventView(LoggedEvent, TurnStartEvent):
    # When a person's turn runs on a clock, the time it runs out (null otherwise).
    deadline: NotRequired[datetime | str | None]


class DrawEventView(LoggedEvent, DrawEvent): ...


class PlayEventView(LoggedEvent, PlayEvent): ...


class MovePileEventView(LoggedEvent, MovePileEvent): ...


class EndTurnEventView(LoggedEvent, EndTurnEvent): ...


class HandOverEventView(LoggedEvent, HandOverEvent): ...


class GameOverEventView(LoggedEvent, GameOverEvent): ...


class SeatTakenEventView(LoggedEvent, SeatTakenEvent): ...


class SeatLeftEventView(LoggedEvent, SeatLeftEvent): ...


class SeatReplacedEventView(LoggedEvent, SeatReplacedEvent): ...


class GameStartedEventView(LoggedEvent, GameStartedEvent): ...


class TurnTimedOutEventView(LoggedEvent, TurnTimedOutEvent): ...


class RematchEventView(LoggedEvent, RematchEvent): ...


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
    | SeatReplacedEventView
    | GameStartedEventView
    | TurnTimedOutEventView
    | RematchEventView
)


class PersonEventView(TypedDict):
    """An event of a person's stream: its place in the player's own sequence, its type and when it happened;
    the type's own fields (games/apis/person_stream.py's serializers) follow it in the same mapping."""

    seq: int
    type: str
    at: datetime


class EventPage(TypedDict):
    """A page of the event log; `last` is the seq to read after next time."""

    events: list[EventView]
    last: int
    has_more: bool


class GamePlayer(TypedDict):
    """`name` is None for a person's seat not taken yet."""

    seat: int
    name: str | None
    kind: Literal["person", "computer"]
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
    """The invitation link, by its code (the API writes its URL)."""

    code: str


class InvitationPreview(TypedDict):
    """What an invitation shows whoever holds its code, before they join: who made the table, its seats,
    rules and clock; `game` only for a caller already seated there."""

    code: str
    status: str
    inviter: str
    seats: list[SeatView]
    free_seats: int
    rules: dict[str, Any]
    target_score: int | None
    turn_seconds: int | None
    game: str | None


class TableMembers(TypedDict):
    """What a game view says of the table itself: its seats and creator, the invitation, the clock or the
    abandonment rule, and the rematch. A view stored for an Idempotency-Key's retries
    (games.models.StoredResponseEncoder) holds its times as the text the API wrote for them."""

    seats: list[SeatView]
    invitation: Invitation | None
    turn_seconds: int | None
    turn_deadline: datetime | str | None
    rematch: str | None
    creator_seat: int | None
    abandon_seconds: int | None
    turn_started_at: datetime | str | None
    replaceable_at: datetime | str | None


class GameHeading(TypedDict):
    """What every view of a game says of it, its summary in a list included; `rules` is Rules.to_json()."""

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


class GameView(GameHeading, TableMembers):
    """A game as its player's seat sees it."""

    dealer: int | None
    current_seat: int | None
    hand: list[str]
    table: TableView
    legal_moves: list[MoveJson]
    events: list[EventView]
    more_events_after: int | None
    hand_result: HandResult | None
    seed: str | None


class GameSummary(GameHeading):
    """A game in its player's list, without the cards."""

    created_at: datetime
    updated_at: datetime


class Hint(TypedDict):
    """The rest of the player's turn as sharp would play it, at the game's version."""

    version: int
    moves: list[MoveJson]


class PositionAnalysis(TypedDict):
    legal_moves: list[MoveJson]
    best_turn: list[MoveJson]
