"""What a seat can infer about the hands it cannot see, from the public events of the hand alone.

Each move a normal player makes tells something about the hand it holds at that moment, because normal
follows a fixed order: a King into an empty corner before anything else, then a card onto a pile, then a pile
move, then its highest card into a space, and it ends its turn only when nothing is left to play. So a play
onto a pile while a corner is empty says it holds no King; a pile move or a card into a space says no card
of its hand fits a pile; a card into a space says it holds no higher card that a space takes; and ending the
turn says that no card of its hand can be played on the table it leaves. Such a card stays out of that hand
until the hand draws again: a card drawn later is bound only by what was learnt after it came.

A seat that plays against that order where everyone can see it (a card into a space while a pile could move,
ending its turn while a pile could move) or plays a card it was known not to hold, more often than its draws
since allow, does not play like normal, and nothing more is inferred about its hand in this hand.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from games.engine.masks import CARD_INDEX, KINGS, builds_on
from games.engine.players.table import (
    MOVE_PILE,
    PILE_INDEX,
    PLAY,
    SIDE_COUNT,
    TOP,
    Piles,
    TableRules,
    apply_move,
    playable,
    table_moves,
    table_piles,
)
from games.engine.shapes import DealEvent, Event


@dataclass(frozen=True, slots=True)
class HandKnowledge:
    """Per seat, what its hand cannot hold: `excluded` binds every card it held before its last draws, and
    `recent[i]` binds the card it drew i draws ago (newest first), which only later moves speak for."""

    excluded: tuple[int, ...]
    recent: tuple[tuple[int, ...], ...]

    @classmethod
    def nothing(cls, players: int) -> "HandKnowledge":
        return cls((0,) * players, ((),) * players)


@dataclass(slots=True)
class _Seat:
    """What one seat's moves have said so far: per turn of that seat, the cards its hand was seen not to
    hold (a card's constraints hold from the turn it was drawn on), and when it drew."""

    turn_masks: list[int]
    # For each draw: the index in turn_masks of the first turn whose constraints bind the drawn card.
    draws: list[int]
    normal: bool = True
    surprising: int = 0
    drawn_this_turn: int = 0

    def knowledge(self) -> tuple[int, tuple[int, ...]]:
        if not self.normal:
            return 0, ()
        suffix = [0] * (len(self.turn_masks) + 1)
        for index in range(len(self.turn_masks) - 1, -1, -1):
            suffix[index] = suffix[index + 1] | self.turn_masks[index]
        return suffix[0], tuple(suffix[first] for first in reversed(self.draws))


def _spaces(rules: TableRules, piles: Piles) -> tuple[bool, bool]:
    side = any(encoded < 0 for encoded in piles[:SIDE_COUNT])
    corner = any(encoded < 0 for encoded in piles[SIDE_COUNT:])
    return side, corner


def _tops(piles: Piles) -> int:
    tops = 0
    for encoded in piles:
        if encoded >= 0:
            tops |= 1 << (encoded & TOP)
    return tops


def _pile_can_move(rules: TableRules, piles: Piles) -> bool:
    return bool(table_moves(rules, 0, piles, every_space=False))


def _what_a_move_says(rules: TableRules, piles: Piles, kind: int, card: int, pile: int) -> tuple[int, bool]:
    """The cards a normal hand cannot hold when it makes this move on this table, and whether the move is
    one normal never makes here whatever its hand."""
    side_empty, corner_empty = _spaces(rules, piles)
    kings_first = KINGS & rules.corner_cards if corner_empty else 0
    if kind == MOVE_PILE:
        return kings_first | builds_on(_tops(piles)), False
    if piles[pile] >= 0:
        return kings_first, False
    if pile >= SIDE_COUNT and (1 << card) & KINGS:
        return 0, False
    if _pile_can_move(rules, piles):
        return 0, True
    fillable = (rules.side_cards if side_empty else 0) | (rules.corner_cards & ~KINGS if corner_empty else 0)
    higher = -(1 << (card + 1))
    return kings_first | builds_on(_tops(piles)) | (fillable & higher), False


def infer(rules: TableRules, players: int, draw_at_end: bool, events: Sequence[Event]) -> HandKnowledge:
    """What the public events of the current hand (as one seat sees them: other seats' draws name no card)
    tell about each hand, if each seat plays like normal. Only the events after the last deal are read; the
    table is replayed from them."""
    start = max((index for index, event in enumerate(events) if event["type"] == "deal"), default=None)
    if start is None:
        return HandKnowledge.nothing(players)
    piles: Piles = table_piles(cast(DealEvent, events[start])["piles"])
    seats = [_Seat(turn_masks=[], draws=[]) for _ in range(players)]
    for event in events[start + 1 :]:
        if event["type"] == "turn_start":
            seat = seats[event["seat"]]
            seat.turn_masks.append(0)
            seat.surprising = seat.drawn_this_turn = 0
        elif event["type"] == "draw":
            seat = seats[event["seat"]]
            seat.drawn_this_turn += 1
            # A draw that opens the turn is bound by the turn's moves; one that closes it, by none of them.
            seat.draws.append(len(seat.turn_masks) if draw_at_end else len(seat.turn_masks) - 1)
        elif event["type"] == "play" or event["type"] == "move_pile":
            seat = seats[event["seat"]]
            if event["type"] == "play":
                move = (PLAY, CARD_INDEX[event["card"]], PILE_INDEX[event["to"]])
                bit = 1 << move[1]
                if seat.turn_masks[-1] & bit:
                    seat.normal = False
                elif len(seat.turn_masks) > 1 and seat.turn_masks[-2] & bit:
                    seat.surprising += 1
                    # Under draw_timing=end the last turn's own draw is free of that turn's constraints.
                    allowed = seat.drawn_this_turn + (1 if draw_at_end else 0)
                    if seat.surprising > allowed:
                        seat.normal = False
            else:
                move = (MOVE_PILE, PILE_INDEX[event["from"]], PILE_INDEX[event["to"]])
            said, impossible = _what_a_move_says(rules, piles, *move)
            if impossible:
                seat.normal = False
            seat.turn_masks[-1] |= said
            _, piles = apply_move(0, piles, move)
        elif event["type"] == "end_turn":
            seat = seats[event["seat"]]
            if _pile_can_move(rules, piles):
                seat.normal = False
            seat.turn_masks[-1] |= playable(rules, piles)
    excluded, recent = zip(*(seat.knowledge() for seat in seats), strict=True)
    return HandKnowledge(tuple(excluded), tuple(recent))
