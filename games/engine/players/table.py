"""A compact table for computer players: cards as bits, piles as small integers, moves generated fast.

A card is an index 0..51 in the order of `sort_key` (rank, then suit), so a hand is a 52-bit mask whose bits
read low to high in the order players hold their cards. A pile is one integer: -1 when empty; for a side,
bottom * 64 + top; for a corner, its top alone (a corner never moves, so its bottom never matters). The eight
piles sit in a tuple in the order of PILES: the four sides, then the four corners.
"""

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from games.engine.masks import (
    ALL_CARDS,
    CARD_INDEX,
    COMPILED,
    FITTERS,
    KINGS,
    NOT_KINGS,
    TARGETS,
    builds_on,
    card_count,
)
from games.engine.moves import END_TURN, PILE_MOVE_OF_CODE, PILES, PLAY_OF_CODE, Move
from games.engine.rules import Rules

# Compiled, a Piles is a C struct of eight integers: loops read it with pile_at, since indexing it with a
# variable, iterating over it or passing it as a Sequence builds a Python tuple of it, boxing every pile.
Piles = tuple[int, int, int, int, int, int, int, int]
PILE_COUNT: Final = 8
# A play is (PLAY, card, pile); a pile move is (MOVE_PILE, source, target).
TableMove = tuple[int, int, int]

PLAY: Final = 0
MOVE_PILE: Final = 1
EMPTY: Final = -1
SIDE_COUNT: Final = 4
TOP: Final = 63
BOTTOM_SHIFT: Final = 6

PILE_INDEX: Final[dict[str, int]] = {name: index for index, name in enumerate(PILES)}


@dataclass(frozen=True, slots=True)
class TableRules:
    """The rule options that shape moves, as masks: which cards may open an empty side or corner."""

    side_cards: int
    corner_cards: int
    king_pile_to_corner: bool

    @classmethod
    def of(cls, rules: Rules) -> "TableRules":
        return table_rules(rules.empty_side, rules.empty_corner, rules.king_pile_to_corner)


# There are eight TableRules: each is made once (a frozen dataclass's construction is costly) and shared.
_TABLE_RULES: Final[dict[tuple[str, str, bool], TableRules]] = {}


def table_rules(empty_side: str, empty_corner: str, king_pile_to_corner: bool) -> TableRules:
    """The TableRules of these rule options (Rules.empty_side, empty_corner and king_pile_to_corner)."""
    key = (empty_side, empty_corner, king_pile_to_corner)
    made = _TABLE_RULES.get(key)
    if made is None:
        made = TableRules(
            side_cards=ALL_CARDS if empty_side == "any" else NOT_KINGS,
            corner_cards=ALL_CARDS if empty_corner == "any" else KINGS,
            king_pile_to_corner=king_pile_to_corner,
        )
        _TABLE_RULES[key] = made
    return made


def bits(mask: int) -> Iterator[int]:
    """The set bits of `mask`, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def bit_list(mask: int) -> list[int]:
    """The set bits of `mask`, lowest first, as a list: `list(bits(mask))`, which compiled steps a
    generator object."""
    found: list[int] = []
    while mask:
        low = mask & -mask
        found.append(low.bit_length() - 1)
        mask ^= low
    return found


def cards_mask(cards: Iterable[str]) -> int:
    mask = 0
    for card in cards:
        index = CARD_INDEX.get(card)
        if index is None:
            raise ValueError(f"{card!r} is not a card code such as 'QD'")
        bit = 1 << index
        if mask & bit:
            raise ValueError(f"{card} appears twice")
        mask |= bit
    return mask


def penalty_of(hand: int) -> int:
    return card_count(hand & NOT_KINGS) + 10 * card_count(hand & KINGS)


def table_piles(piles: dict[str, list[str]]) -> Piles:
    encoded = []
    for index, name in enumerate(PILES):
        pile = piles[name]
        if not pile:
            encoded.append(EMPTY)
        elif index < SIDE_COUNT:
            encoded.append(CARD_INDEX[pile[0]] << BOTTOM_SHIFT | CARD_INDEX[pile[-1]])
        else:
            encoded.append(CARD_INDEX[pile[-1]])
    a, b, c, d, e, f, g, h = encoded
    return a, b, c, d, e, f, g, h


def table_cards(piles: dict[str, list[str]]) -> int:
    """Every card on the table as a mask."""
    return cards_mask(card for name in PILES for card in piles[name])


def table_moves(rules: TableRules, hand: int, piles: Piles, *, every_space: bool = True) -> list[TableMove]:
    """Every play and pile move open at this table: plays pile by pile, then pile moves by source then target.
    With `every_space` false, only the first empty side and the first empty corner are offered, as all empty
    sides (and all empty corners) are alike."""
    moves: list[TableMove] = []
    empty_side_done = empty_corner_done = False
    tops = 0
    for pile in range(PILE_COUNT):
        encoded = pile_at(piles, pile)
        if encoded >= 0:
            tops |= 1 << (encoded & TOP)
            fitting = FITTERS[encoded & TOP] & hand
        elif pile < SIDE_COUNT:
            if empty_side_done:
                continue
            empty_side_done = not every_space
            fitting = rules.side_cards & hand
        else:
            if empty_corner_done:
                continue
            empty_corner_done = not every_space
            fitting = rules.corner_cards & hand
        while fitting:
            low = fitting & -fitting
            moves.append((PLAY, low.bit_length() - 1, pile))
            fitting ^= low
    moves.extend(pile_moves(rules, piles, tops, every_space=every_space))
    return moves


def pile_moves(rules: TableRules, piles: Piles, tops: int, *, every_space: bool) -> list[TableMove]:
    """The pile moves open at this table (`tops`, the top cards as a mask), by source then target. A
    King-bottomed side pile is offered every empty corner, or with `every_space` false only the first."""
    moves: list[TableMove] = []
    for source in range(SIDE_COUNT):
        moving = pile_at(piles, source)
        if moving < 0:
            continue
        bottom = moving >> BOTTOM_SHIFT
        into_corner = rules.king_pile_to_corner and (1 << bottom) & KINGS
        if not (tops & TARGETS[bottom] or into_corner):
            continue
        corner_offered = False
        for target in range(PILE_COUNT):
            if target == source:
                continue
            encoded = pile_at(piles, target)
            if encoded >= 0:
                if FITTERS[encoded & TOP] >> bottom & 1:
                    moves.append((MOVE_PILE, source, target))
            elif target >= SIDE_COUNT and into_corner and not corner_offered:
                corner_offered = not every_space
                moves.append((MOVE_PILE, source, target))
    return moves


def _pile_by_index(piles: Piles, index: int) -> int:
    # Apart from pile_at, which stays small enough for the C compiler to inline into its callers.
    return piles[index]


def pile_at(piles: Piles, index: int) -> int:
    """Pile `index` of `piles`: `piles[index]`, which compiled would box the whole tuple for a variable
    index."""
    if not COMPILED:
        return _pile_by_index(piles, index)
    # Each read is of a constant index, which compiled is one field of the struct.
    if index < 4:
        if index < 2:
            return piles[0] if index == 0 else piles[1]
        return piles[2] if index == 2 else piles[3]
    if index < 6:
        return piles[4] if index == 4 else piles[5]
    return piles[6] if index == 6 else piles[7]


def with_pile(piles: Piles, index: int, value: int) -> Piles:
    """`piles` with pile `index` set to `value`: a new tuple built whole, which compiled stays a C struct."""
    p0, p1, p2, p3, p4, p5, p6, p7 = piles
    if index < 4:
        if index == 0:
            return value, p1, p2, p3, p4, p5, p6, p7
        if index == 1:
            return p0, value, p2, p3, p4, p5, p6, p7
        if index == 2:
            return p0, p1, value, p3, p4, p5, p6, p7
        return p0, p1, p2, value, p4, p5, p6, p7
    if index == 4:
        return p0, p1, p2, p3, value, p5, p6, p7
    if index == 5:
        return p0, p1, p2, p3, p4, value, p6, p7
    if index == 6:
        return p0, p1, p2, p3, p4, p5, value, p7
    return p0, p1, p2, p3, p4, p5, p6, value


def pile_onto(piles: Piles, source: int, target: int) -> int:
    """The target pile once the side pile `source` is moved onto it, as apply_move makes it."""
    top = pile_at(piles, source) & TOP
    onto = pile_at(piles, target)
    return onto - (onto & TOP) + top if onto >= 0 else top


def apply_move(hand: int, piles: Piles, move: TableMove) -> tuple[int, Piles]:
    kind, a, b = move
    if kind == PLAY:
        encoded = pile_at(piles, b)
        if encoded >= 0:
            value = encoded - (encoded & TOP) + a
        else:
            value = a << BOTTOM_SHIFT | a if b < SIDE_COUNT else a
        return hand & ~(1 << a), with_pile(piles, b, value)
    return hand, with_pile(with_pile(piles, b, pile_onto(piles, a, b)), a, EMPTY)


def engine_move(move: TableMove) -> Move:
    kind, a, b = move
    if kind == PLAY:
        return PLAY_OF_CODE[a << 3 | b]
    return PILE_MOVE_OF_CODE[a << 3 | b]


def engine_turn(moves: Sequence[TableMove], hand: int) -> list[Move]:
    """A computer turn's moves as the engine's, ending with END_TURN unless they leave the hand empty."""
    turn = [engine_move(move) for move in moves]
    if hand:
        turn.append(END_TURN)
    return turn


def playable(rules: TableRules, piles: Piles) -> int:
    """Every card that a hand could play onto this table: those that fit a pile's top, and those the rules
    let into an empty side or an empty corner."""
    tops = spaces = 0
    for pile in range(PILE_COUNT):
        encoded = pile_at(piles, pile)
        if encoded >= 0:
            tops |= 1 << (encoded & TOP)
        elif pile < SIDE_COUNT:
            spaces |= rules.side_cards
        else:
            spaces |= rules.corner_cards
    return builds_on(tops) | spaces
