"""Normal's rule for its next move, shared by the normal level and by the play-outs of sharp's sampling."""

from typing import Protocol

from games.engine.players.table import (
    BOTTOM_SHIFT,
    FITTERS,
    KINGS,
    PLAY,
    SIDE_COUNT,
    TARGETS,
    TOP,
    Piles,
    TableMove,
    TableRules,
    bits,
    pile_moves,
)


class Uniform(Protocol):
    """A source of uniform choices: the seeded stream of a turn, or a play-out's generator."""

    def uniform(self, m: int) -> int: ...


def normal_move(rules: TableRules, hand: int, piles: Piles, stream: Uniform) -> TableMove | None:
    """Kings into corners, then what fits, then pile moves, then the highest card into a space. The table is
    read in one pass, and pile moves are listed only when one may be open, since play-outs make this call
    most often."""
    side = corner = -1
    tops = 0
    # What the side piles' bottoms could move onto, and whether one is a King: no pile moves without.
    movable_onto = 0
    king_bottom = False
    builds: list[TableMove] = []
    for pile in range(8):
        encoded = piles[pile]
        if encoded >= 0:
            top = encoded & TOP
            tops |= 1 << top
            fitting = FITTERS[top] & hand
            while fitting:
                low = fitting & -fitting
                builds.append((PLAY, low.bit_length() - 1, pile))
                fitting ^= low
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
            choices = list(bits(kings))
            return PLAY, choices[stream.uniform(len(choices))], corner
    if builds:
        return builds[stream.uniform(len(builds))]
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
