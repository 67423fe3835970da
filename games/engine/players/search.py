"""Sharp's search: every end-of-turn position reachable this turn, each visited once, the best one played.

Positions are keyed canonically (the hand, the sides as a sorted multiset, the corners as a sorted multiset),
because empty sides are interchangeable and so are corners: orders of play that reach the same table, or a
mirror of it, share one entry of the transposition table. A node is one distinct position; when the budget of
nodes is spent (or, as a rare safety valve, a wall-clock deadline passes), the best position found so far is
played.

A position is worth, in order: going out; then a balance of the penalty left in hand (a King costs 10, so
Kings always go down), the cards held for piles that wait for this player alone (tip 4: holding them costs
nothing but the risk of a penalty point, and denies the others what those cards would open), and what the
next player could play on the table, judged against the unseen cards, chains included, spaces counting most.
The weights were tuned with the simulator against three normal players.
"""

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from games.engine.masks import COMPILED, FITTERS, KINGS, NOT_KINGS, TARGETS, builds_on, built_on, card_count
from games.engine.players.table import (
    BOTTOM_SHIFT,
    EMPTY,
    PILE_COUNT,
    PLAY,
    SIDE_COUNT,
    TOP,
    Piles,
    TableMove,
    TableRules,
    pile_at,
    pile_moves,
    pile_onto,
    with_pile,
)

if TYPE_CHECKING:
    # As in masks.py: a C int64_t compiled, and never evaluated as pure Python.
    from mypy_extensions import i64

DEFAULT_NODE_BUDGET: Final = 1000
# The worth of one card held for a pile that waits for this player alone, in penalty points.
HELD_FOR_ME: Final = 5.0
# What one unseen card the next player could play costs, in penalty points, per unit of threat.
GIFT_COST: Final = 3.0
# A card the next player could play at once counts 1; one that builds on such a card less, one more down less.
CHAIN_WEIGHTS: Final = (1.0, 0.8, 0.5)
# The threat used when the others' hand sizes are unknown: three opponents holding six cards each.
DEFAULT_THREAT: Final = 0.5

# The search reads the clock once every this many nodes, to keep the check cheap, and first at its second
# node, so that a search begun past its deadline stops at once with the position it started from.
CLOCK_EVERY: Final = 32

# The search in C (_search_native.c), built beside the compiled engine: the same positions in the same order
# and the same balances, so the same choices (tests/engine/test_search_native.py). The pure-Python build never
# loads it, and where it was not built the _Search below runs in both builds.
NativeSearch = Callable[
    [int, Piles, int, int, int, bool, float, int, int, "int | None"],
    tuple[tuple[tuple[float, tuple[TableMove, ...]], ...], int, bool, bool],
]


def _native_search() -> NativeSearch | None:
    if not COMPILED:
        return None
    try:
        from games.engine.players import _search_native
    except ImportError:
        return None
    held = _search_native.constants()
    if (
        held["HELD_FOR_ME"] != HELD_FOR_ME
        or held["CHAIN_WEIGHTS"] != CHAIN_WEIGHTS
        or held["CLOCK_EVERY"] != CLOCK_EVERY
        or held["GIFT_COST"] != GIFT_COST
        or held["KINGS"] != KINGS
        or held["FITTERS"] != FITTERS
        or held["TARGETS"] != TARGETS
    ):
        raise ImportError(
            "games/engine/players/_search_native.c's weights differ from search.py's: rebuild it"
        )
    return _search_native.search


NATIVE: Final = _native_search()

# The pile moves of a position where none can be open: one empty list, never changed, rather than one each.
_NO_MOVES: Final[list[TableMove]] = []

# (1 when the hand is empty, the balance above); higher is better.
Score = tuple[int, float]
# Inside the search, going out is worth this balance: more than any other.
_GONE_OUT: Final = math.inf


# Candidate and SearchResult write out their __init__: compiled, a dataclass's generated one runs interpreted,
# and every own turn of sharp's play-outs is a search.


@dataclass(slots=True)
class Candidate:
    """One end-of-turn position: the moves that reach it and its score."""

    moves: tuple[TableMove, ...]
    score: Score

    def __init__(self, moves: tuple[TableMove, ...], score: Score) -> None:
        self.moves = moves
        self.score = score


@dataclass(slots=True)
class SearchResult:
    moves: tuple[TableMove, ...]
    score: Score
    nodes: int
    budget_reached: bool
    # The best `keep` end positions, best first; the first is (moves, score).
    candidates: tuple[Candidate, ...]
    cut_off: bool

    def __init__(
        self,
        moves: tuple[TableMove, ...],
        score: Score,
        nodes: int,
        budget_reached: bool,
        candidates: tuple[Candidate, ...] = (),
        cut_off: bool = False,
    ) -> None:
        self.moves = moves
        self.score = score
        self.nodes = nodes
        self.budget_reached = budget_reached
        self.candidates = candidates
        self.cut_off = cut_off


def threat_of(hand_counts: list[int], seat: int) -> float:
    """How pressing it is to leave little on the table: opponents with few cards may go out soon."""
    return sum(1 / max(1, count) for other, count in enumerate(hand_counts) if other != seat)


def held_for_me(hand: int, piles: Piles, unseen: int) -> int:
    """How many cards in hand can be played later on piles that no unseen card fits, one after another:
    those piles wait for this player. The piles are taken last to first, each followed down the chain of
    cards held for it before the next."""
    held = 0
    count = 0
    for pile in range(PILE_COUNT - 1, -1, -1):
        encoded = pile_at(piles, pile)
        if encoded < 0:
            continue
        top = encoded & TOP
        while True:
            fitting = FITTERS[top]
            if fitting & unseen:
                break
            mine = fitting & hand & ~held
            if not mine:
                break
            card = mine & -mine
            held |= card
            count += 1
            top = card.bit_length() - 1
    return count


def _rank(entry: tuple[float, int, tuple[TableMove, ...]]) -> tuple[float, int]:
    """The search's order of end positions: the best balance first, the one found first among equals."""
    return -entry[0], entry[1]


def _multiset(a: int, b: int, c: int, d: int) -> int:
    """Four piles as one number that is the same for every order of them: sorted by a network of five
    compare-exchanges (no list to sort), then packed 13 bits each (a pile is -1 up to 51 * 64 + 51), on
    64-bit machine integers."""
    w: i64 = a
    x: i64 = b
    y: i64 = c
    z: i64 = d
    if w > x:
        w, x = x, w
    if y > z:
        y, z = z, y
    if w > y:
        w, y = y, w
    if x > z:
        x, z = z, x
    if x > y:
        x, y = y, x
    return ((((w + 1) << 13 | (x + 1)) << 13 | (y + 1)) << 13) | (z + 1)


class _Search:
    """One search's state: the positions seen (the transposition table), the moves of the line being
    explored, and the best end positions found. A class rather than a closure, so that nothing
    refers back to it once the search is done: its tables are freed at once, not by the cyclic collector."""

    def __init__(
        self,
        rules: TableRules,
        unseen: int,
        threat: float,
        node_budget: int,
        deadline_ns: int | None,
        per_hand: bool,
    ) -> None:
        self.rules = rules
        self.unseen = unseen
        self.node_budget = node_budget
        self.deadline_ns = deadline_ns
        # The positions seen, each as (hand, sides, corners), sides and corners as _multiset gives them.
        self.seen: set[tuple[int, int, int]] = set()
        self.path: list[TableMove] = []
        # With `per_hand`, for each hand left its best (balance, order found, path), the order found breaking
        # ties for the earlier; an empty hand (gone out) is worth more than any balance. Without, only the
        # best of all, which is the same as the best of those: the first position found with the highest
        # balance (a search for one end position, as every own turn of sharp's play-outs is).
        self.per_hand = per_hand
        self.best_of_hand: dict[int, tuple[float, int, tuple[TableMove, ...]]] = {}
        self.best: tuple[float, int, tuple[TableMove, ...]] = (-math.inf, 0, ())
        self.budget_reached = False
        self.cut_off = False
        self.gift_cost = GIFT_COST * threat
        # The tops that no unseen card fits: the piles that wait for this player.
        self.awaited = ~built_on(unseen)
        self.side_cards = rules.side_cards
        self.corner_cards = rules.corner_cards
        self.corner_kings = rules.corner_cards & KINGS
        self.corner_fill = rules.corner_cards & ~KINGS

    def visit(self, hand: int, piles: Piles) -> bool:
        """Explores from this position; True once the search must stop (gone out, or budget spent).

        The moves worth searching are tried promising ones first, so that a search cut short by its budget
        has seen the natural lines: Kings into the first empty corner, plays onto piles, pile moves, then
        cards into the first empty corner and the first empty side, highest first (all empty sides are
        alike, and so are all empty corners). The position's balance counts what the next player could
        play (the gift): each unseen card that fits a pile, then, weighted less, each that would build on
        those; an empty side takes any card it allows, and so does a side pile that can move (moving it
        opens a side), so spaces count the most. The balance is worked out in one pass over the table and
        the moves are tried as they are found, each child's table built whole (compiled, the piles stay a
        C struct), because the search, and sharp's play-outs with it, spend their time here."""
        p0, p1, p2, p3, p4, p5, p6, p7 = piles
        key = (hand, _multiset(p0, p1, p2, p3), _multiset(p4, p5, p6, p7))
        seen = self.seen
        if key in seen:
            return False
        count = len(seen)
        if count >= self.node_budget:
            self.budget_reached = True
            return True
        deadline_ns = self.deadline_ns
        if deadline_ns is not None and count % CLOCK_EVERY == 1:
            if time.perf_counter_ns() > deadline_ns:
                self.budget_reached = self.cut_off = True
                return True
        seen.add(key)
        path = self.path
        if not hand:
            gone_out = (_GONE_OUT, count + 1, tuple(path))
            if self.per_hand:
                self.best_of_hand[0] = gone_out
            else:
                self.best = gone_out
            return True
        side_cards, corner_cards = self.side_cards, self.corner_cards
        # The table in one pass: tops, side bottoms, the first empty side and corner, what spaces take.
        tops = spaces = bottoms = 0
        side = corner = -1
        for pile in range(PILE_COUNT):
            encoded = pile_at(piles, pile)
            if encoded >= 0:
                tops |= 1 << (encoded & TOP)
                if pile < SIDE_COUNT:
                    bottoms |= 1 << (encoded >> BOTTOM_SHIFT)
            elif pile < SIDE_COUNT:
                spaces |= side_cards
                if side < 0:
                    side = pile
            else:
                spaces |= corner_cards
                if corner < 0:
                    corner = pile
        fitting = builds_on(tops)
        moving = _NO_MOVES
        if bottoms & fitting or (bottoms & KINGS and corner >= 0 and self.rules.king_pile_to_corner):
            moving = pile_moves(self.rules, piles, tops, every_space=False)
            if moving:
                spaces |= side_cards
        # The balance: gift's three links, the cards held for piles that wait for this player, the penalty.
        unseen = self.unseen
        level = (fitting | spaces) & unseen
        counted = level
        given = CHAIN_WEIGHTS[0] * card_count(level)
        level = builds_on(level) & unseen & ~counted
        given += CHAIN_WEIGHTS[1] * card_count(level)
        level = builds_on(level) & unseen & ~(counted | level)
        given += CHAIN_WEIGHTS[2] * card_count(level)
        held = held_for_me(hand, piles, unseen) if hand & builds_on(tops & self.awaited) else 0
        balance = (
            -(card_count(hand & NOT_KINGS) + 10 * card_count(hand & KINGS))
            + HELD_FOR_ME * held
            - self.gift_cost * given
        )
        if self.per_hand:
            best_of_hand = self.best_of_hand
            best = best_of_hand.get(hand)
            if best is None or balance > best[0]:
                best_of_hand[hand] = (balance, count + 1, tuple(path))
        elif balance > self.best[0]:
            self.best = (balance, count + 1, tuple(path))
        # The moves, in order; apply_move inlined.
        if corner >= 0:
            kings = hand & self.corner_kings
            while kings:
                low = kings & -kings
                kings ^= low
                card = low.bit_length() - 1
                path.append((PLAY, card, corner))
                stop = self.visit(hand & ~low, with_pile(piles, corner, card))
                path.pop()
                if stop:
                    return True
        if hand & fitting:
            for pile in range(PILE_COUNT):
                encoded = pile_at(piles, pile)
                if encoded >= 0:
                    mine = FITTERS[encoded & TOP] & hand
                    while mine:
                        low = mine & -mine
                        mine ^= low
                        card = low.bit_length() - 1
                        path.append((PLAY, card, pile))
                        stop = self.visit(
                            hand & ~low, with_pile(piles, pile, encoded - (encoded & TOP) + card)
                        )
                        path.pop()
                        if stop:
                            return True
        for move in moving:
            _, source, target = move
            path.append(move)
            stop = self.visit(
                hand, with_pile(with_pile(piles, target, pile_onto(piles, source, target)), source, EMPTY)
            )
            path.pop()
            if stop:
                return True
        if corner >= 0:
            fill = hand & self.corner_fill
            while fill:
                card = fill.bit_length() - 1
                fill ^= 1 << card
                path.append((PLAY, card, corner))
                stop = self.visit(hand & ~(1 << card), with_pile(piles, corner, card))
                path.pop()
                if stop:
                    return True
        if side >= 0:
            fill = hand & side_cards
            while fill:
                card = fill.bit_length() - 1
                fill ^= 1 << card
                path.append((PLAY, card, side))
                stop = self.visit(hand & ~(1 << card), with_pile(piles, side, card << BOTTOM_SHIFT | card))
                path.pop()
                if stop:
                    return True
        return False


def search(
    rules: TableRules,
    hand: int,
    piles: Piles,
    unseen: int,
    *,
    threat: float = DEFAULT_THREAT,
    node_budget: int = DEFAULT_NODE_BUDGET,
    keep: int = 1,
    deadline_ns: int | None = None,
) -> SearchResult:
    """The best end-of-turn position reachable from (hand, piles), with the moves that reach it; and as
    candidates, the best end position of each of the `keep` best hands it can be left with (so that they
    differ in what is held, not only in where the same cards lie). Past `deadline_ns` (a
    `time.perf_counter_ns()` value) it stops as if its node budget were spent, and says it was cut off."""
    if node_budget < 1:
        raise ValueError("the node budget is at least 1")
    if keep < 1:
        raise ValueError("a search keeps at least one candidate")
    if NATIVE is not None:
        ranked, nodes, budget_reached, cut_off = NATIVE(
            hand,
            piles,
            unseen,
            rules.side_cards,
            rules.corner_cards,
            rules.king_pile_to_corner,
            GIFT_COST * threat,
            node_budget,
            keep,
            deadline_ns,
        )
        return _result(ranked, nodes, budget_reached, cut_off)
    return python_search(
        rules, hand, piles, unseen, threat=threat, node_budget=node_budget, keep=keep, deadline_ns=deadline_ns
    )


def python_search(
    rules: TableRules,
    hand: int,
    piles: Piles,
    unseen: int,
    *,
    threat: float = DEFAULT_THREAT,
    node_budget: int = DEFAULT_NODE_BUDGET,
    keep: int = 1,
    deadline_ns: int | None = None,
) -> SearchResult:
    """search() as _Search makes it, in Python (compiled or not), whether or not the C search was built."""
    found = _Search(rules, unseen, threat, node_budget, deadline_ns, per_hand=keep > 1)
    found.visit(hand, piles)
    ranked: tuple[tuple[float, tuple[TableMove, ...]], ...]
    if keep == 1:
        best = found.best
        ranked = ((best[0], best[2]),)
    else:
        ranked = tuple(
            (balance, moves) for balance, _, moves in sorted(found.best_of_hand.values(), key=_rank)[:keep]
        )
    return _result(ranked, len(found.seen), found.budget_reached, found.cut_off)


def _result(
    ranked: tuple[tuple[float, tuple[TableMove, ...]], ...], nodes: int, budget_reached: bool, cut_off: bool
) -> SearchResult:
    candidates = tuple(
        Candidate(moves, (1, 0.0) if balance == _GONE_OUT else (0, balance)) for balance, moves in ranked
    )
    return SearchResult(candidates[0].moves, candidates[0].score, nodes, budget_reached, candidates, cut_off)
