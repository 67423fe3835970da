"""A compact table for computer players: cards as bits, piles as small integers, moves generated fast.

A card is an index 0..51 in the order of `sort_key` (rank, then suit), so a hand is a 52-bit mask whose bits
read low to high in the order players hold their cards. A pile is one integer: -1 when empty; for a side,
bottom * 64 + top; for a corner, its top alone (a corner never moves, so its bottom never matters). The eight
piles sit in a tuple in the order of PILES: the four sides, then the four corners.
"""

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from games.engine.cards import DECK, RANKS, SUITS, sort_key
from games.engine.moves import PILES, Move, MovePile, Play
from games.engine.rules import Rules

Piles = tuple[int, int, int, int, int, int, int, int]
# A play is (PLAY, card, pile); a pile move is (MOVE_PILE, source, target).
TableMove = tuple[int, int, int]

PLAY = 0
MOVE_PILE = 1
EMPTY = -1
SIDE_COUNT = 4
TOP = 63
BOTTOM_SHIFT = 6

CARDS: tuple[str, ...] = tuple(sorted(DECK, key=sort_key))
CARD_INDEX: dict[str, int] = {card: index for index, card in enumerate(CARDS)}
ALL_CARDS = (1 << len(CARDS)) - 1
KINGS = sum(1 << CARD_INDEX["K" + suit] for suit in SUITS)
NOT_KINGS = ALL_CARDS & ~KINGS
PILE_INDEX: dict[str, int] = {name: index for index, name in enumerate(PILES)}


def _rank_of(index: int) -> int:
    return RANKS.index(CARDS[index][0]) + 1


def _is_red(index: int) -> bool:
    return CARDS[index][1] in "DH"


# FITTERS[top]: the mask of the two cards that build on `top` (none on an Ace).
FITTERS: tuple[int, ...] = tuple(
    sum(
        1 << card
        for card in range(len(CARDS))
        if _rank_of(card) + 1 == _rank_of(top) and _is_red(card) != _is_red(top)
    )
    for top in range(len(CARDS))
)


# TARGETS[card]: the mask of the two cards that `card` builds on (none for a King).
TARGETS: tuple[int, ...] = tuple(
    sum(1 << top for top in range(len(CARDS)) if FITTERS[top] >> card & 1) for card in range(len(CARDS))
)

# Each rank is a nibble of four suits, C D H S: C and S black, D and H red.
_NIBBLES = sum(1 << (4 * rank) for rank in range(len(RANKS)))
_BLACK = _NIBBLES * 0b1001
_RED = _NIBBLES * 0b0110


def builds_on(mask: int) -> int:
    """The cards that build on any card of `mask`: the union of FITTERS over it, with a few shifts."""
    black_ranks = ((mask & _BLACK) | (mask & _BLACK) >> 3) & _NIBBLES
    red_ranks = ((mask & _RED) >> 1 | (mask & _RED) >> 2) & _NIBBLES
    return (black_ranks * 0b0110 | red_ranks * 0b1001) >> 4


def built_on(mask: int) -> int:
    """The cards that any card of `mask` builds on: the union of TARGETS over it, with a few shifts."""
    black_ranks = ((mask & _BLACK) | (mask & _BLACK) >> 3) & _NIBBLES
    red_ranks = ((mask & _RED) >> 1 | (mask & _RED) >> 2) & _NIBBLES
    return ((black_ranks * 0b0110 | red_ranks * 0b1001) << 4) & ALL_CARDS


@dataclass(frozen=True, slots=True)
class TableRules:
    """The rule options that shape moves, as masks: which cards may open an empty side or corner."""

    side_cards: int
    corner_cards: int
    king_pile_to_corner: bool

    @classmethod
    def of(cls, rules: Rules) -> "TableRules":
        return cls(
            side_cards=ALL_CARDS if rules.empty_side == "any" else NOT_KINGS,
            corner_cards=ALL_CARDS if rules.empty_corner == "any" else KINGS,
            king_pile_to_corner=rules.king_pile_to_corner,
        )


def bits(mask: int) -> Iterator[int]:
    """The set bits of `mask`, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


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
    return (hand & NOT_KINGS).bit_count() + 10 * (hand & KINGS).bit_count()


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
    for pile in range(8):
        encoded = piles[pile]
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


def pile_moves(rules: TableRules, piles: Sequence[int], tops: int, *, every_space: bool) -> list[TableMove]:
    """The pile moves open at this table (`tops`, the top cards as a mask), by source then target. A
    King-bottomed side pile is offered every empty corner, or with `every_space` false only the first."""
    moves: list[TableMove] = []
    for source in range(SIDE_COUNT):
        moving = piles[source]
        if moving < 0:
            continue
        bottom = moving >> BOTTOM_SHIFT
        into_corner = rules.king_pile_to_corner and (1 << bottom) & KINGS
        if not (tops & TARGETS[bottom] or into_corner):
            continue
        corner_offered = False
        for target in range(8):
            encoded = piles[target]
            if target == source:
                continue
            if encoded >= 0:
                if FITTERS[encoded & TOP] >> bottom & 1:
                    moves.append((MOVE_PILE, source, target))
            elif target >= SIDE_COUNT and into_corner and not corner_offered:
                corner_offered = not every_space
                moves.append((MOVE_PILE, source, target))
    return moves


def apply_move(hand: int, piles: Piles, move: TableMove) -> tuple[int, Piles]:
    kind, a, b = move
    table = list(piles)
    if kind == PLAY:
        hand &= ~(1 << a)
        encoded = table[b]
        if encoded >= 0:
            table[b] = encoded - (encoded & TOP) + a
        else:
            table[b] = a << BOTTOM_SHIFT | a if b < SIDE_COUNT else a
    else:
        top = table[a] & TOP
        encoded = table[b]
        table[b] = encoded - (encoded & TOP) + top if encoded >= 0 else top
        table[a] = EMPTY
    p0, p1, p2, p3, p4, p5, p6, p7 = table
    return hand, (p0, p1, p2, p3, p4, p5, p6, p7)


def engine_move(move: TableMove) -> Move:
    kind, a, b = move
    if kind == PLAY:
        return Play(CARDS[a], PILES[b])
    return MovePile(PILES[a], PILES[b])


def moves_by_kind(
    moves: list[TableMove], piles: Piles
) -> tuple[list[TableMove], list[TableMove], list[TableMove], list[TableMove]]:
    """The moves split, in their order, into Kings into empty corners, plays onto piles, pile moves, and
    cards into empty spaces."""
    kings: list[TableMove] = []
    builds: list[TableMove] = []
    pile_moves: list[TableMove] = []
    fills: list[TableMove] = []
    for move in moves:
        kind, card, pile = move
        if kind == MOVE_PILE:
            pile_moves.append(move)
        elif piles[pile] >= 0:
            builds.append(move)
        elif pile >= SIDE_COUNT and (1 << card) & KINGS:
            kings.append(move)
        else:
            fills.append(move)
    return kings, builds, pile_moves, fills


def playable(rules: TableRules, piles: Piles) -> int:
    """Every card that a hand could play onto this table: those that fit a pile's top, and those the rules
    let into an empty side or an empty corner."""
    tops = spaces = 0
    for pile in range(8):
        encoded = piles[pile]
        if encoded >= 0:
            tops |= 1 << (encoded & TOP)
        elif pile < SIDE_COUNT:
            spaces |= rules.side_cards
        else:
            spaces |= rules.corner_cards
    return builds_on(tops) | spaces
