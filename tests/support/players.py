"""Test tooling for the engine's computer players: what the tests read of their table encoding."""

import random

from games.engine.cards import DECK
from games.engine.masks import KINGS
from games.engine.moves import PILES
from games.engine.players.table import MOVE_PILE, SIDE_COUNT, Piles, TableMove


def random_table(rng: random.Random) -> tuple[list[str], dict[str, list[str]]]:
    """A hand of up to 12 cards and piles of up to three, from one shuffled deck."""
    deck = list(DECK)
    rng.shuffle(deck)
    hand, rest = deck[: rng.randint(0, 12)], deck[12:]
    piles: dict[str, list[str]] = {}
    for name in PILES:
        size = rng.choice((0, 0, 1, 1, 2, 3))
        piles[name], rest = rest[:size], rest[size:]
    return hand, piles


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
