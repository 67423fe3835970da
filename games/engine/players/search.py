"""Sharp's search: every end-of-turn position reachable this turn, each visited once, the best one played.

Positions are keyed canonically (the hand, the sides as a sorted multiset, the corners as a sorted multiset),
because empty sides are interchangeable and so are corners: orders of play that reach the same table, or a
mirror of it, share one entry of the transposition table. A node is one distinct position; when the budget of
nodes is spent, the best position found so far is played.
"""

from dataclasses import dataclass

from games.engine.players.table import (
    FITTERS,
    KINGS,
    MOVE_PILE,
    SIDE_COUNT,
    TOP,
    Piles,
    TableMove,
    TableRules,
    apply_move,
    penalty_of,
    table_moves,
)

DEFAULT_NODE_BUDGET = 2000

# An end-of-turn position's worth, compared as a tuple, higher is better: (went out, -penalty left in hand,
# -what the next player may play).
Score = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class SearchResult:
    moves: tuple[TableMove, ...]
    score: Score
    nodes: int
    budget_reached: bool


def gift(rules: TableRules, piles: Piles, unseen: int, pile_can_move: bool) -> int:
    """How many of the unseen cards the next player could play on this table. An empty side takes any card
    it allows, and so does a side pile that can move (moving it opens a side): spaces count the most."""
    playable = 0
    for pile in range(8):
        encoded = piles[pile]
        if encoded >= 0:
            playable |= FITTERS[encoded & TOP]
        elif pile < SIDE_COUNT:
            playable |= rules.side_cards
        else:
            playable |= rules.corner_cards
    if pile_can_move:
        playable |= rules.side_cards
    return (playable & unseen).bit_count()


def _ordered(moves: list[TableMove], piles: Piles) -> list[TableMove]:
    """Promising moves first, so that a search cut short by its budget has seen the natural lines: Kings into
    corners, plays onto piles, pile moves, then cards into spaces, highest first."""
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
    fills.reverse()
    return kings + builds + pile_moves + fills


def search(
    rules: TableRules, hand: int, piles: Piles, unseen: int, *, node_budget: int = DEFAULT_NODE_BUDGET
) -> SearchResult:
    """The best end-of-turn position reachable from (hand, piles), with the moves that reach it."""
    seen: set[tuple[int, ...]] = set()
    path: list[TableMove] = []
    best_score: Score = (0, -(1 << 30), 0)
    best_path: tuple[TableMove, ...] = ()
    budget_reached = False

    def visit(hand: int, piles: Piles) -> bool:
        """Explores from this position; True once the search must stop (gone out, or budget spent)."""
        nonlocal best_score, best_path, budget_reached
        sides = sorted(piles[:SIDE_COUNT])
        corners = sorted(piles[SIDE_COUNT:])
        key = (hand, *sides, *corners)
        if key in seen:
            return False
        if len(seen) >= node_budget:
            budget_reached = True
            return True
        seen.add(key)
        if not hand:
            best_score, best_path = (1, 0, 0), tuple(path)
            return True
        moves = table_moves(rules, hand, piles, every_space=False)
        penalty = -penalty_of(hand)
        if penalty >= best_score[1]:
            pile_can_move = any(move[0] == MOVE_PILE for move in moves)
            score = (0, penalty, -gift(rules, piles, unseen, pile_can_move))
            if score > best_score:
                best_score, best_path = score, tuple(path)
        for move in _ordered(moves, piles):
            path.append(move)
            child_hand, child_piles = apply_move(hand, piles, move)
            stop = visit(child_hand, child_piles)
            path.pop()
            if stop:
                return True
        return False

    visit(hand, piles)
    return SearchResult(best_path, best_score, len(seen), budget_reached)
