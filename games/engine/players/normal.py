"""Normal's rule for its next move, shared by the normal level and by the play-outs of sharp's sampling."""

from games.engine.deal import Uniform
from games.engine.masks import FITTERS, KINGS, TARGETS, card_count
from games.engine.players.table import (
    BOTTOM_SHIFT,
    PILE_COUNT,
    PLAY,
    SIDE_COUNT,
    TOP,
    Piles,
    TableMove,
    TableRules,
    apply_move,
    bit_list,
    pile_at,
    pile_moves,
)


def normal_move(rules: TableRules, hand: int, piles: Piles, stream: Uniform) -> TableMove | None:
    """Kings into corners, then what fits, then pile moves, then the highest card into a space. The table is
    read in one pass, and pile moves are listed only when one may be open, since play-outs make this call
    most often."""
    side = corner = -1
    tops = 0
    # What the side piles' bottoms could move onto, and whether one is a King: no pile moves without.
    movable_onto = 0
    king_bottom = False
    # How many plays onto piles there are: the one chosen is found by a second pass, with no list built.
    builds = 0
    for pile in range(PILE_COUNT):
        encoded = pile_at(piles, pile)
        if encoded >= 0:
            top = encoded & TOP
            tops |= 1 << top
            builds += card_count(FITTERS[top] & hand)
            if pile < SIDE_COUNT:
                bottom = encoded >> BOTTOM_SHIFT
                movable_onto |= TARGETS[bottom]
                king_bottom = king_bottom or bool(KINGS >> bottom & 1)
        elif pile < SIDE_COUNT:
            if side < 0:
                side = pile
        elif corner < 0:
            corner = pile
    if corner >= 0:
        kings = hand & KINGS & rules.corner_cards
        if kings:
            choices = bit_list(kings)
            return PLAY, choices[stream.uniform(len(choices))], corner
    if builds:
        return _nth_build(hand, piles, stream.uniform(builds))
    if tops & movable_onto or (king_bottom and rules.king_pile_to_corner):
        moving = pile_moves(rules, piles, tops, every_space=False)
        if moving:
            return moving[stream.uniform(len(moving))]
    into_side = hand & rules.side_cards if side >= 0 else 0
    into_corner = hand & rules.corner_cards & ~KINGS if corner >= 0 else 0
    if not into_side | into_corner:
        return None
    card = (into_side | into_corner).bit_length() - 1
    return PLAY, card, side if into_side >> card & 1 else corner


def _nth_build(hand: int, piles: Piles, index: int) -> TableMove:
    """The play onto a pile at `index` in the order pile by pile, lowest card first."""
    for pile in range(PILE_COUNT):
        encoded = pile_at(piles, pile)
        if encoded >= 0:
            fitting = FITTERS[encoded & TOP] & hand
            count = card_count(fitting)
            if index < count:
                for _ in range(index):
                    fitting &= fitting - 1
                return PLAY, (fitting & -fitting).bit_length() - 1, pile
            index -= count
    raise ValueError("fewer plays onto piles than the index")


def normal_turn(rules: TableRules, hand: int, piles: Piles, stream: Uniform) -> tuple[list[TableMove], int]:
    """Normal's whole turn: its moves, each chosen from where the last one left, and the hand they leave."""
    played: list[TableMove] = []
    while hand:
        move = normal_move(rules, hand, piles, stream)
        if move is None:
            break
        played.append(move)
        hand, piles = apply_move(hand, piles, move)
    return played, hand
