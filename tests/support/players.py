"""Test tooling for the engine's computer players: what the tests read of their table encoding."""

import random

from games.engine.cards import DECK
from games.engine.masks import ALL_CARDS, KINGS
from games.engine.moves import PILES
from games.engine.players.table import (
    MOVE_PILE,
    SIDE_COUNT,
    Piles,
    TableMove,
    cards_mask,
    table_cards,
    table_piles,
)
from games.engine.rules import Rules, make_rules


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


def random_search_table(rng: random.Random) -> tuple[int, Piles, int]:
    """A random_table for the search, encoded: the hand's mask, the piles, and as the unseen cards a random
    part of those neither in hand nor on the table."""
    hand, piles = random_table(rng)
    hand_mask = cards_mask(hand)
    unseen = ALL_CARDS & ~hand_mask & ~table_cards(piles) & rng.getrandbits(52)
    return hand_mask, table_piles(piles), unseen


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


def every_rules() -> list[Rules]:
    """Every preset, each with a King's pile allowed into an empty corner and not."""
    return [
        make_rules({"preset": preset, "king_pile_to_corner": allowed})
        for preset in ("classic", "casual", "any_space")
        for allowed in (False, True)
    ]


def rules_id(rules: Rules) -> str:
    """A test id for one of every_rules()."""
    return f"{rules.preset}-{rules.king_pile_to_corner}"
