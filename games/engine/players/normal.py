"""Normal's rule for its next move, shared by the normal level and by the play-outs of sharp's sampling."""

from typing import Protocol

from games.engine.players.table import Piles, TableMove, TableRules, moves_by_kind, table_moves


class Uniform(Protocol):
    """A source of uniform choices: the seeded stream of a turn, or a play-out's generator."""

    def uniform(self, m: int) -> int: ...


def normal_move(rules: TableRules, hand: int, piles: Piles, stream: Uniform) -> TableMove | None:
    """Kings into corners, then what fits, then pile moves, then the highest card into a space."""
    moves = table_moves(rules, hand, piles, every_space=False)
    kings, builds, pile_moves, fills = moves_by_kind(moves, piles)
    for choices in (kings, builds, pile_moves):
        if choices:
            return choices[stream.uniform(len(choices))]
    if fills:
        top_card = max(card for _, card, _ in fills)
        return next(move for move in fills if move[1] == top_card)
    return None
