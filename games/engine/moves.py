"""Moves as small value objects with one canonical JSON form each."""

from dataclasses import dataclass
from typing import Any, Final

from games.engine.cards import parse_card
from games.engine.errors import CardError, MoveError
from games.engine.masks import CARDS
from games.engine.shapes import EndTurnJson, MovePileJson, PlayJson

SIDES: Final[tuple[str, ...]] = ("N", "E", "S", "W")
CORNERS: Final[tuple[str, ...]] = ("NE", "SE", "SW", "NW")
PILES: Final[tuple[str, ...]] = SIDES + CORNERS


@dataclass(frozen=True, slots=True)
class Play:
    """Play `card` from hand onto pile `to`; `to` is None when the caller asks for the best spot."""

    card: str
    to: str | None

    def to_json(self) -> PlayJson:
        data: PlayJson = {"type": "play", "card": self.card}
        if self.to is not None:
            data["to"] = self.to
        return data


@dataclass(frozen=True, slots=True)
class MovePile:
    """Move the whole side pile `source` onto pile `to`."""

    source: str
    to: str

    def to_json(self) -> MovePileJson:
        return {"type": "move_pile", "from": self.source, "to": self.to}


@dataclass(frozen=True, slots=True)
class EndTurn:
    def to_json(self) -> EndTurnJson:
        return {"type": "end_turn"}


Move = Play | MovePile | EndTurn

END_TURN: Final = EndTurn()

# Every play and pile move, made once and shared (they are immutable), by a code: the play of the card at
# index c of CARDS (masks.py) onto the pile at index p of PILES is PLAY_OF_CODE[c * 8 + p], and the pile move
# from the pile at index s onto the one at index t is PILE_MOVE_OF_CODE[s * 8 + t].
PLAY_OF_CODE: Final[tuple[Play, ...]] = tuple(
    Play(CARDS[code >> 3], PILES[code & 7]) for code in range(len(CARDS) * len(PILES))
)
PILE_MOVE_OF_CODE: Final[tuple[MovePile, ...]] = tuple(
    MovePile(PILES[code >> 3], PILES[code & 7]) for code in range(len(PILES) * len(PILES))
)


def _pile_name(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    # Only ASCII is upper-cased: str.upper() turns the long s 'ſ' into 'S'.
    if not isinstance(value, str) or not value.isascii() or value.upper() not in PILES:
        names = ", ".join(PILES)
        raise MoveError("unknown_pile", f"'{key}' must name a pile: one of {names}; got {value!r}.")
    return value.upper()


def parse_move(data: Any, *, allow_open_play: bool = False) -> Move:
    """Reads a move's JSON form. `allow_open_play` lets a play leave out `to` (best spot)."""
    if not isinstance(data, dict):
        raise MoveError("invalid_move", 'A move is an object such as {"type": "end_turn"}.')
    kind = data.get("type")
    allowed_keys = {"play": {"type", "card", "to"}, "move_pile": {"type", "from", "to"}, "end_turn": {"type"}}
    if not isinstance(kind, str) or kind not in allowed_keys:
        raise MoveError("invalid_move", f"Unknown move type {kind!r}: use play, move_pile or end_turn.")
    extra = set(data) - allowed_keys[kind]
    if extra:
        raise MoveError("invalid_move", f"A {kind} move has no field(s) {', '.join(sorted(extra))}.")
    if kind == "end_turn":
        return END_TURN
    if kind == "move_pile":
        return MovePile(_pile_name(data, "from"), _pile_name(data, "to"))
    if "card" not in data:
        raise MoveError("invalid_move", "A play names its 'card'.")
    try:
        card = parse_card(data["card"])
    except CardError as error:
        raise MoveError(error.code, error.detail) from error
    if data.get("to") is None:
        if allow_open_play:
            return Play(card, None)
        raise MoveError("invalid_move", "A play names the pile it goes 'to'.")
    return Play(card, _pile_name(data, "to"))
