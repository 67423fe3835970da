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
from collections.abc import Sequence
from dataclasses import dataclass

from games.engine.players.table import (
    BOTTOM_SHIFT,
    EMPTY,
    FITTERS,
    KINGS,
    NOT_KINGS,
    PLAY,
    SIDE_COUNT,
    TOP,
    Piles,
    TableMove,
    TableRules,
    builds_on,
    built_on,
    pile_moves,
)

DEFAULT_NODE_BUDGET = 1000
# The worth of one card held for a pile that waits for this player alone, in penalty points.
HELD_FOR_ME = 5.0
# What one unseen card the next player could play costs, in penalty points, per unit of threat.
GIFT_COST = 3.0
# A card the next player could play at once counts 1; one that builds on such a card less, one more down less.
CHAIN_WEIGHTS = (1.0, 0.8, 0.5)
# The threat used when the others' hand sizes are unknown: three opponents holding six cards each.
DEFAULT_THREAT = 0.5

# The search reads the clock once every this many nodes, to keep the check cheap, and first at its second
# node, so that a search begun past its deadline stops at once with the position it started from.
CLOCK_EVERY = 32

# (1 when the hand is empty, the balance above); higher is better.
Score = tuple[int, float]
# Inside the search, going out is worth this balance: more than any other.
_GONE_OUT = math.inf


@dataclass(frozen=True, slots=True)
class Candidate:
    """One end-of-turn position: the moves that reach it and its score."""

    moves: tuple[TableMove, ...]
    score: Score


@dataclass(frozen=True, slots=True)
class SearchResult:
    moves: tuple[TableMove, ...]
    score: Score
    nodes: int
    budget_reached: bool
    # The best `keep` end positions, best first; the first is (moves, score).
    candidates: tuple[Candidate, ...] = ()
    cut_off: bool = False


def threat_of(hand_counts: list[int], seat: int) -> float:
    """How pressing it is to leave little on the table: opponents with few cards may go out soon."""
    return sum(1 / max(1, count) for other, count in enumerate(hand_counts) if other != seat)


def held_for_me(hand: int, piles: Sequence[int], unseen: int) -> int:
    """How many cards in hand can be played later on piles that no unseen card fits, one after another:
    those piles wait for this player."""
    tops = [encoded & TOP for encoded in piles if encoded >= 0]
    held = 0
    count = 0
    while tops:
        fitting = FITTERS[tops.pop()]
        if fitting & unseen:
            continue
        mine = fitting & hand & ~held
        if mine:
            card = mine & -mine
            held |= card
            count += 1
            tops.append(card.bit_length() - 1)
    return count


def _rank(entry: tuple[float, int, tuple[TableMove, ...]]) -> tuple[float, int]:
    """The search's order of end positions: the best balance first, the one found first among equals."""
    return -entry[0], entry[1]


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
    seen: set[tuple[int, ...]] = set()
    path: list[TableMove] = []
    # For each hand left, its best (balance, order found, path), the order found breaking ties for the
    # earlier; an empty hand (gone out) is worth more than any balance.
    best_of_hand: dict[int, tuple[float, int, tuple[TableMove, ...]]] = {}
    budget_reached = cut_off = False
    gift_cost = GIFT_COST * threat
    # The tops that no unseen card fits: the piles that wait for this player.
    awaited = ~built_on(unseen)

    side_cards, corner_cards = rules.side_cards, rules.corner_cards
    king_pile_to_corner = rules.king_pile_to_corner
    corner_kings, corner_fill = corner_cards & KINGS, corner_cards & ~KINGS
    chain_0, chain_1, chain_2 = CHAIN_WEIGHTS

    def visit(hand: int, piles: Sequence[int]) -> bool:
        """Explores from this position; True once the search must stop (gone out, or budget spent).

        The moves worth searching are tried promising ones first, so that a search cut short by its budget
        has seen the natural lines: Kings into the first empty corner, plays onto piles, pile moves, then
        cards into the first empty corner and the first empty side, highest first (all empty sides are
        alike, and so are all empty corners). The position's balance counts what the next player could
        play (the gift): each unseen card that fits a pile, then, weighted less, each that would build on
        those; an empty side takes any card it allows, and so does a side pile that can move (moving it
        opens a side), so spaces count the most. The move list and the balance are worked out here, in one
        pass over the table, because the search, and sharp's play-outs with it, spend their time here."""
        nonlocal budget_reached, cut_off
        p0, p1, p2, p3, p4, p5, p6, p7 = piles
        key = (hand, *sorted((p0, p1, p2, p3)), *sorted((p4, p5, p6, p7)))
        if key in seen:
            return False
        count = len(seen)
        if count >= node_budget:
            budget_reached = True
            return True
        if deadline_ns is not None and count % CLOCK_EVERY == 1:
            if time.perf_counter_ns() > deadline_ns:
                budget_reached = cut_off = True
                return True
        seen.add(key)
        if not hand:
            best_of_hand[0] = (_GONE_OUT, count + 1, tuple(path))
            return True
        # The table in one pass: tops, side bottoms, the first empty side and corner, what spaces take.
        tops = spaces = bottoms = 0
        side = corner = -1
        for pile in range(8):
            encoded = piles[pile]
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
        moves: list[TableMove] = []
        if corner >= 0:
            kings = hand & corner_kings
            while kings:
                low = kings & -kings
                moves.append((PLAY, low.bit_length() - 1, corner))
                kings ^= low
        if hand & fitting:
            for pile in range(8):
                encoded = piles[pile]
                if encoded >= 0:
                    mine = FITTERS[encoded & TOP] & hand
                    while mine:
                        low = mine & -mine
                        moves.append((PLAY, low.bit_length() - 1, pile))
                        mine ^= low
        if bottoms & fitting or (bottoms & KINGS and corner >= 0 and king_pile_to_corner):
            moving = pile_moves(rules, piles, tops, every_space=False)
            if moving:
                moves.extend(moving)
                spaces |= side_cards
        if corner >= 0:
            fill = hand & corner_fill
            while fill:
                card = fill.bit_length() - 1
                moves.append((PLAY, card, corner))
                fill ^= 1 << card
        if side >= 0:
            fill = hand & side_cards
            while fill:
                card = fill.bit_length() - 1
                moves.append((PLAY, card, side))
                fill ^= 1 << card
        # The balance: gift's three links, the cards held for piles that wait for this player, the penalty.
        level = (fitting | spaces) & unseen
        counted = level
        given = chain_0 * level.bit_count()
        level = builds_on(level) & unseen & ~counted
        given += chain_1 * level.bit_count()
        level = builds_on(level) & unseen & ~(counted | level)
        given += chain_2 * level.bit_count()
        held = held_for_me(hand, piles, unseen) if hand & builds_on(tops & awaited) else 0
        balance = (
            -((hand & NOT_KINGS).bit_count() + 10 * (hand & KINGS).bit_count())
            + HELD_FOR_ME * held
            - gift_cost * given
        )
        best = best_of_hand.get(hand)
        if best is None or balance > best[0]:
            best_of_hand[hand] = (balance, count + 1, tuple(path))
        for move in moves:
            path.append(move)
            # apply_move, inlined.
            kind, a, b = move
            table = list(piles)
            if kind == PLAY:
                encoded = table[b]
                if encoded >= 0:
                    table[b] = encoded - (encoded & TOP) + a
                else:
                    table[b] = a << BOTTOM_SHIFT | a if b < SIDE_COUNT else a
                stop = visit(hand & ~(1 << a), table)
            else:
                encoded = table[b]
                top = table[a] & TOP
                table[b] = encoded - (encoded & TOP) + top if encoded >= 0 else top
                table[a] = EMPTY
                stop = visit(hand, table)
            path.pop()
            if stop:
                return True
        return False

    visit(hand, piles)
    if keep == 1:
        ranked = [min(best_of_hand.values(), key=_rank)]
    else:
        ranked = sorted(best_of_hand.values(), key=_rank)[:keep]
    candidates = tuple(
        Candidate(moves, (1, 0.0) if balance == _GONE_OUT else (0, balance)) for balance, _, moves in ranked
    )
    return SearchResult(
        candidates[0].moves, candidates[0].score, len(seen), budget_reached, candidates, cut_off
    )
