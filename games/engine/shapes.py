"""The shapes of what leaves the engine: its events (one TypedDict per type), a hand's result, a move's JSON
form and a seat's observation. They are plain JSON-ready dicts, so that the services store them and the
selectors build views from them as they are.

`Event` is the union of the event types, told apart by `type`: test `event["type"] == "draw"` (not through
a variable) and mypy narrows the event to DrawEvent. A key that is not a Python name ("from") makes its
TypedDict use the functional syntax."""

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict, cast


class HandResult(TypedDict):
    """How a hand ended: who went out (None when the hand was blocked), every hand left, and the scores."""

    hand_number: int
    reason: Literal["out", "blocked"]
    out_seat: int | None
    hands: list[list[str]]
    penalties: list[int]
    scores: list[int]
    turns_taken: list[int]


class DealEvent(TypedDict):
    type: Literal["deal"]
    hand_number: int
    dealer: int
    piles: dict[str, list[str]]
    stock: int


class TurnStartEvent(TypedDict):
    type: Literal["turn_start"]
    seat: int
    turn: int


class DrawEvent(TypedDict):
    """A draw; `card` is left out of another seat's draw as a seat sees it (observe_event)."""

    type: Literal["draw"]
    seat: int
    card: NotRequired[str]
    stock: int


class PlayEvent(TypedDict):
    type: Literal["play"]
    seat: int
    card: str
    to: str


MovePileEvent = TypedDict(
    "MovePileEvent",
    {"type": Literal["move_pile"], "seat": int, "from": str, "to": str, "cards": list[str]},
)


class EndTurnEvent(TypedDict):
    type: Literal["end_turn"]
    seat: int
    turn: int


class HandOverEvent(HandResult):
    type: Literal["hand_over"]


class GameOverEvent(TypedDict):
    type: Literal["game_over"]
    winners: list[int]
    scores: list[int]


Event = (
    DealEvent
    | TurnStartEvent
    | DrawEvent
    | PlayEvent
    | MovePileEvent
    | EndTurnEvent
    | HandOverEvent
    | GameOverEvent
)


def stored_event(kind: str, data: Mapping[str, Any]) -> Event:
    """An event the engine wrote, from its type and other members as an event log keeps them apart."""
    return cast(Event, {"type": kind, **data})


class PlayJson(TypedDict):
    """A play; `to` is left out of an open play, which asks for the best spot."""

    type: Literal["play"]
    card: str
    to: NotRequired[str]


MovePileJson = TypedDict("MovePileJson", {"type": Literal["move_pile"], "from": str, "to": str})


class EndTurnJson(TypedDict):
    type: Literal["end_turn"]


MoveJson = PlayJson | MovePileJson | EndTurnJson


class Observation(TypedDict):
    """What one seat may see of a game (observe): its own hand, the table, the stock's size, every hand's size
    and the scores; `rules` is Rules.to_json()."""

    seat: int
    players: int
    rules: dict[str, Any]
    target_score: int | None
    status: str
    hand_number: int
    dealer: int
    current_seat: int | None
    turn: int
    hand: list[str]
    hand_counts: list[int]
    stock: int
    piles: dict[str, list[str]]
    scores: list[int]
    turns_taken: list[int]
    played_this_turn: int
    idle_turns: int
    legal_moves: list[MoveJson]
    hand_results: list[HandResult]
    winners: list[int] | None
