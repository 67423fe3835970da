"""Normal's rule for its next move, shared by the normal level and by the play-outs of sharp's sampling."""

from typing import Protocol

from games.engine.players.table import (
    FITTERS,
    KINGS,
    PLAY,
    SIDE_COUNT,
    TOP,
    Piles,
    TableMove,
    TableRules,
    bits,
    table_moves,
)


class Uniform(Protocol):
    """A source of uniform choices: the seeded stream of a turn, or a play-out's generator."""

    def uniform(self, m: int) -> int: ...


def normal_move(rules: TableRules, hand: int, piles: Piles, stream: Uniform) -> TableMove | None:
    """Kings into corners, then what fits, then pile moves, then the highest card into a space. Each kind
    is looked for only when the kinds before it offer nothing, since play-outs make this call most often."""
    side = corner = -1
    for pile in range(8):
        if piles[pile] < 0:
            if pile < SIDE_COUNT:
                if side < 0:
                    side = pile
            elif corner < 0:
                corner = pile
    if corner >= 0:
        kings = hand & KINGS & rules.corner_cards
        if kings:
            choices = list(bits(kings))
            return PLAY, choices[stream.uniform(len(choices))], corner
    builds: list[TableMove] = []
    for pile in range(8):
        encoded = piles[pile]
        if encoded >= 0:
            fitting = FITTERS[encoded & TOP] & hand
            while fitting:
                low = fitting & -fitting
                builds.append((PLAY, low.bit_length() - 1, pile))
                fitting ^= low
    if builds:
        return builds[stream.uniform(len(builds))]
    pile_moves = table_moves(rules, 0, piles, every_space=False)
    if pile_moves:
        return pile_moves[stream.uniform(len(pile_moves))]
    into_side = hand & rules.side_cards if side >= 0 else 0
    into_corner = hand & rules.corner_cards & ~KINGS if corner >= 0 else 0
    if not into_side | into_corner:
        return None
    card = (into_side | into_corner).bit_length() - 1
    return PLAY, card, side if into_side >> card & 1 else corner
