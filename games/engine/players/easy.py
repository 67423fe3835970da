"""Easy's turn: any legal move at random, each one after a chance of stopping first."""

from typing import Final

from games.engine.deal import SeededStream
from games.engine.players.table import Piles, TableMove, TableRules, apply_move, table_moves

# Easy ends its turn before each move with this chance (one in EASY_STOP_ODDS), plays left or not.
EASY_STOP_ODDS: Final = 3


def easy_move(rules: TableRules, hand: int, piles: Piles, stream: SeededStream) -> TableMove | None:
    """Any legal move at random, unless it stops first."""
    moves = table_moves(rules, hand, piles)
    if not moves or stream.uniform(EASY_STOP_ODDS) == 0:
        return None
    return moves[stream.uniform(len(moves))]


def easy_turn(
    rules: TableRules, hand: int, piles: Piles, stream: SeededStream
) -> tuple[list[TableMove], int]:
    """Easy's whole turn: its moves, each chosen from where the last one left, and the hand they leave."""
    played: list[TableMove] = []
    while hand:
        move = easy_move(rules, hand, piles, stream)
        if move is None:
            break
        played.append(move)
        hand, piles = apply_move(hand, piles, move)
    return played, hand
