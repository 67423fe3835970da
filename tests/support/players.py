"""Test tooling for the engine's computer players: what the tests read of their table encoding."""

from games.engine.masks import KINGS
from games.engine.players.table import MOVE_PILE, SIDE_COUNT, Piles, TableMove


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
