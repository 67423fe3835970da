"""Daily par: the best daily result the player can reach on a revealed deal, found by search over whole turns.

Par is computed only once the day's seed is revealed, so the search is given the whole deal by design: every
hand and the stock's order. The computer players are replayed exactly as the server plays them (through the
players' one computer-turn loop, `computer_steps`: the turn's seeded stream, their own seat's observation,
every move through `step`), so their replies to any line of the player's are known, and the search is over
the player's choices alone.

A node is the table at the start of one of the player's turns (after its draw). Its children are the distinct
positions the player can end that turn in (the hand and the piles, exactly in place: the computer players'
seeded choices depend on which pile is where), each followed by the computer turns up to the player's next
turn or the end of the hand. The search is a beam search over whole turns whose beam and branching widen each
round (2, 4, 8, ...), every node valued by greedy rollouts to the end of the hand, with transposition tables
on the full state so that a widened round only pays for what it has not seen. It is anytime: when its node
budget (or an optional time limit) is spent it returns the best line found so far. The lines that the normal
and sharp computer players would play from seat 0 seed it, so par is never below either.

A ranked attempt left unfinished is recorded as it stands (minus the penalty of the hand), so by default the
search also considers stopping: playing what lowers the hand most in some turn and leaving the hand there.
"""

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from games.engine.cards import hand_penalty
from games.engine.errors import MoveError
from games.engine.game import apply, daily_result, new_game, step
from games.engine.masks import FITTERS, builds_on, card_count
from games.engine.moves import END_TURN, Move, parse_move
from games.engine.players import Budget, computer_steps
from games.engine.players.montecarlo import no_cyclic_gc
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
    cards_mask,
    engine_move,
    penalty_of,
    pile_at,
    pile_moves,
    pile_onto,
    table_piles,
    with_pile,
)
from games.engine.rules import Rules
from games.engine.shapes import Event, MoveJson
from games.engine.state import DIRECT, PLAYING, State

PLAYER_SEAT: Final = 0
# The node budget of a day's par: a few seconds on one core (bench/par_bench.py measures it).
DEFAULT_NODE_BUDGET: Final = 5_000
# At most this many end-of-turn positions of one turn are considered; most turns have a few dozen to a few
# hundred, and the cap keeps the rare table of thousands from spending the budget on one turn.
POSITION_CAP: Final = 2_000
# Listing and ranking this many end-of-turn positions costs about as much as replaying one turn with the
# computer turns after it, so it counts as one node against the budget: a budget of nodes is one of time.
POSITIONS_PER_NODE: Final = 16
# The beam's first width and branching; each round doubles both.
FIRST_WIDTH: Final = 2
FIRST_BRANCHING: Final = 4

# The widths of a gift and a penalty in ordered_positions' packed keys: a gift is at most 52 cards, a
# penalty at most 88 points.
_GIFT_BITS: Final = 6
_PENALTY_BITS: Final = 7

# The greedy rollouts that value a node follow its first position (the most shed, or going out) and its
# second (the least given to the next player).
ROLLOUT_POLICIES: Final = (0, 1)

BEAM: Final = "beam"
SEED_LEVELS: Final = ("normal", "sharp")


class ParError(ValueError):
    """A line that the daily deal refuses: an illegal move, or a move after the hand is over."""


@dataclass(frozen=True, slots=True)
class RevealedDeal:
    """A revealed daily deal as the server plays it: the seed it is shuffled from, the rules, and the
    computer opponents' levels in seat order (seats 1, 2, ...); the player is seat 0."""

    seed: bytes
    rules: Rules
    levels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LineOutcome:
    """What a line of the player's moves yields on a deal: the daily result and turns as the server records
    them, whether the hand is over, and the state it leaves."""

    result: int
    turns: int
    finished: bool
    state: State


@dataclass(frozen=True, slots=True)
class Par:
    """The best line found: the player's moves in order, the result and turns it yields (verified by
    replaying it), and how it was found."""

    result: int
    turns: int
    moves: tuple[Move, ...]
    finished: bool
    method: str
    node_budget: int
    nodes: int
    turns_replayed: int
    positions: int
    budget_reached: bool
    width: int

    def line_json(self) -> list[MoveJson]:
        return [move.to_json() for move in self.moves]

    def how_found(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "node_budget": self.node_budget,
            "nodes": self.nodes,
            "turns_replayed": self.turns_replayed,
            "positions": self.positions,
            "budget_reached": self.budget_reached,
            "width": self.width,
        }


# --- the deal as the server plays it ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineStep:
    """One move of the hand along a line: who made it, the move, what happened and the state after it."""

    seat: int
    move: Move
    events: list[Event]
    state: State


# Par is worked out offline and must come out the same on every run and machine: its computer players play
# without the wall-clock cutoff that bounds a served request (a minute is never reached; the work budget is).
UNTIMED: Final = Budget(cutoff_ms=60_000)


def opponent_steps(state: State, levels: Sequence[str]) -> Iterator[LineStep]:
    """Plays the computer seats' turns, as the server does (the players' one computer-turn loop), until it is
    the player's turn or the hand is over, move by move. `levels[i]` is the level of seat i + 1."""
    seats = {seat: level for seat, level in enumerate(levels, start=1)}
    for played in computer_steps(state, seats, bytes.fromhex(state.seed), budget=UNTIMED):
        yield LineStep(played.seat, played.move, played.events, played.state)


def computer_turns(state: State, levels: Sequence[str]) -> State:
    """The state once the computer seats have played up to the player's turn or the end of the hand."""
    for played in opponent_steps(state, levels):
        state = played.state
    return state


def dealt(deal: RevealedDeal) -> State:
    """The daily game as dealt, before any move."""
    return new_game(
        rules=deal.rules, players=len(deal.levels) + 1, seed=deal.seed, target_score=None, seed_scheme=DIRECT
    )[0]


def daily_start(deal: RevealedDeal) -> State:
    """A daily game as the server starts it: one hand shuffled from the seed itself, the player in seat 0
    against one computer per level, and any computer turns before the player's first played."""
    return computer_turns(dealt(deal), deal.levels)


def outcome_of(state: State) -> tuple[int, int]:
    """The player's daily result and turns as the server records them: those of the hand once it is over;
    while it is in play (an attempt left unfinished), minus the penalty of the hand as it stands."""
    if state.status == PLAYING:
        return -hand_penalty(state.hands[PLAYER_SEAT]), state.turns_taken[PLAYER_SEAT]
    return daily_result(state, PLAYER_SEAT), int(state.hand_results[-1]["turns_taken"][PLAYER_SEAT])


def line_steps(deal: RevealedDeal, moves: Sequence[Move | MoveJson | dict[str, Any]]) -> Iterator[LineStep]:
    """Every move of the hand along the player's line (Move values or their JSON), the computer players'
    replies included, from a fresh daily game: each through `step`, as the server plays them. Raises
    ParError when a move of the line is refused or comes after the hand is over."""
    state = dealt(deal)
    for played in opponent_steps(state, deal.levels):
        state = played.state
        yield played
    for number, given in enumerate(moves, start=1):
        if state.status != PLAYING:
            raise ParError(f"move {number} comes after the hand is over")
        try:
            move = given if isinstance(given, Move) else parse_move(given)
            state, events = step(state, move, seat=PLAYER_SEAT)
        except MoveError as error:
            raise ParError(f"move {number} is refused: {error.code}: {error.detail}") from error
        yield LineStep(PLAYER_SEAT, move, events, state)
        for played in opponent_steps(state, deal.levels):
            state = played.state
            yield played


def replay_line(deal: RevealedDeal, moves: Sequence[Move | MoveJson | dict[str, Any]]) -> LineOutcome:
    """What the player's line yields on the deal, replayed by `line_steps`: the result and turns as the
    server records them. Raises ParError when the deal refuses the line."""
    state = daily_start(deal)
    for played in line_steps(deal, moves):
        state = played.state
    result, turns = outcome_of(state)
    return LineOutcome(result=result, turns=turns, finished=state.status != PLAYING, state=state)


def level_line(deal: RevealedDeal, level: str) -> tuple[Move, ...]:
    """The moves a computer player of `level` would make in the player's seat, with that seat's seeded
    streams, to the end of the hand."""
    state = daily_start(deal)
    seats = {PLAYER_SEAT: level, **{seat: other for seat, other in enumerate(deal.levels, start=1)}}
    line = [
        played.move
        for played in computer_steps(state, seats, bytes.fromhex(state.seed), budget=UNTIMED)
        if played.seat == PLAYER_SEAT
    ]
    return tuple(line)


# --- the search ---------------------------------------------------------------------------------------------


StateKey = tuple[Any, ...]


def state_key(state: State) -> StateKey:
    """Everything of a state that the rest of the hand can depend on."""
    return (
        state.status,
        state.current_seat,
        state.turn,
        state.idle_turns,
        state.played_this_turn,
        tuple(state.turns_taken),
        tuple(tuple(hand) for hand in state.hands),
        tuple(state.stock),
        tuple(tuple(pile) for pile in state.piles.values()),
    )


@dataclass(slots=True)
class TurnPosition:
    """One way to end a turn: the moves that reach it, the hand and piles they leave, and whether they empty
    the hand."""

    moves: tuple[TableMove, ...]
    hand: int
    piles: Piles
    out: bool

    # Written out: compiled, the dataclass's generated __init__ runs interpreted, and par makes thousands.
    def __init__(self, moves: tuple[TableMove, ...], hand: int, piles: Piles, out: bool) -> None:
        self.moves = moves
        self.hand = hand
        self.piles = piles
        self.out = out


class _TurnPositions:
    """The positions found so far, each with its first line, and the line being explored: a class rather than
    a closure that refers to itself, so that it is freed as soon as the listing ends."""

    def __init__(self, rules: TableRules, cap: int) -> None:
        self.rules = rules
        self.cap = cap
        self.found: dict[tuple[int, int, int], TurnPosition] = {}
        self.path: list[TableMove] = []

    def visit(self, hand: int, piles: Piles) -> bool:
        """Records this position and those reachable from it; True once the cap is reached. The moves are
        those of `table_moves(rules, hand, piles, every_space=False)`, in its order, each applied as
        `apply_move` does; they are generated here, one at a time, since listing positions is most of par's
        work."""
        found = self.found
        p0, p1, p2, p3, p4, p5, p6, p7 = piles
        # The piles packed 12 bits each (a pile is -1 up to 51 * 64 + 51): two numbers that stay machine
        # integers, where a tuple of the eight would box each.
        key = (
            hand,
            (((p0 + 1) << 12 | (p1 + 1)) << 12 | (p2 + 1)) << 12 | (p3 + 1),
            (((p4 + 1) << 12 | (p5 + 1)) << 12 | (p6 + 1)) << 12 | (p7 + 1),
        )
        if key in found:
            return False
        path = self.path
        found[key] = TurnPosition(tuple(path), hand, piles, not hand)
        if len(found) >= self.cap:
            return True
        if not hand:
            return False
        rules = self.rules
        side_done = corner_done = False
        tops = 0
        for pile in range(PILE_COUNT):
            encoded = pile_at(piles, pile)
            if encoded >= 0:
                tops |= 1 << (encoded & TOP)
                fitting = FITTERS[encoded & TOP] & hand
            elif pile < SIDE_COUNT:
                if side_done:
                    continue
                side_done = True
                fitting = rules.side_cards & hand
            else:
                if corner_done:
                    continue
                corner_done = True
                fitting = rules.corner_cards & hand
            while fitting:
                low = fitting & -fitting
                fitting ^= low
                card = low.bit_length() - 1
                if encoded >= 0:
                    value = encoded - (encoded & TOP) + card
                elif pile < SIDE_COUNT:
                    value = card << BOTTOM_SHIFT | card
                else:
                    value = card
                path.append((PLAY, card, pile))
                full = self.visit(hand & ~low, with_pile(piles, pile, value))
                path.pop()
                if full:
                    return True
        for move in pile_moves(rules, piles, tops, every_space=False):
            _, source, target = move
            moved = with_pile(piles, target, pile_onto(piles, source, target))
            path.append(move)
            full = self.visit(hand, with_pile(moved, source, EMPTY))
            path.pop()
            if full:
                return True
        return False


def turn_positions(rules: TableRules, hand: int, piles: Piles, cap: int = POSITION_CAP) -> list[TurnPosition]:
    """The distinct positions (hand and piles exactly in place) reachable this turn, each with the first
    line of moves found to reach it, at most `cap` of them, in a fixed order. A card or pile goes into the
    first empty side or corner only, as sharp's search does: the others are alike but for where they are."""
    positions = _TurnPositions(rules, cap)
    positions.visit(hand, piles)
    return list(positions.found.values())


def gift_to(rules: TableRules, piles: Piles, cards: int) -> int:
    """How many of `cards` (another player's) could be played on this table one after another: those that
    fit a pile or open a space, then those that build on them."""
    tops = spaces = 0
    for pile in range(PILE_COUNT):
        encoded = pile_at(piles, pile)
        if encoded >= 0:
            tops |= 1 << (encoded & TOP)
        else:
            spaces |= rules.side_cards if pile < SIDE_COUNT else rules.corner_cards
    playable = (builds_on(tops) | spaces) & cards
    reached = playable
    while playable:
        playable = builds_on(playable) & cards & ~reached
        reached |= playable
    return card_count(reached)


class _BudgetSpent(Exception):
    pass


@dataclass(slots=True)
class _Node:
    """The table at the start of one of the player's turns, or at the end of the hand, with the player's
    moves that lead there."""

    state: State
    line: tuple[Move, ...]
    # state_key(state), which the search's tables are keyed by: worked out once.
    key: StateKey

    def __init__(self, state: State, line: tuple[Move, ...]) -> None:
        self.state = state
        self.line = line
        self.key = state_key(state)


@dataclass(slots=True)
class _Best:
    result: int
    line: tuple[Move, ...]
    method: str


@dataclass(slots=True)
class _Search:
    """One search's budget, best line so far and transposition tables, and the steps of the beam search."""

    deal: RevealedDeal
    allow_stop: bool
    node_budget: int
    deadline: float | None
    clock: Callable[[], float]
    table_rules: TableRules
    turns_replayed: int = 0
    positions_listed: int = 0
    best: _Best | None = None
    # Per node (by state key): its ordered end-of-turn positions, the children made so far, its rollout value.
    positions: dict[StateKey, list[TurnPosition]] = field(default_factory=dict)
    children: dict[tuple[StateKey, int], _Node] = field(default_factory=dict)
    rollouts: dict[tuple[StateKey, int], int] = field(default_factory=dict)
    values: dict[StateKey, int] = field(default_factory=dict)
    stops: dict[StateKey, int] = field(default_factory=dict)

    @property
    def nodes(self) -> int:
        """What the search has spent of its budget."""
        return self.turns_replayed + self.positions_listed // POSITIONS_PER_NODE

    def spend(self, turns: int, positions: int) -> None:
        """Counts work against the budget; raises _BudgetSpent, counting nothing, if it would overrun it."""
        spent = self.turns_replayed + turns + (self.positions_listed + positions) // POSITIONS_PER_NODE
        if spent > self.node_budget or (self.deadline is not None and self.clock() >= self.deadline):
            raise _BudgetSpent
        self.turns_replayed += turns
        self.positions_listed += positions

    def offer(self, result: int, line: tuple[Move, ...], method: str) -> None:
        if self.best is None or result > self.best.result:
            self.best = _Best(result, line, method)

    def ordered_positions(self, node: _Node) -> list[TurnPosition]:
        """The node's end-of-turn positions, most promising first: going out; then, taking turns, the next
        position by least penalty left in hand (then least given to the next player) and the next by least
        given to the next player (then least penalty), so that both lines that shed cards and lines that
        hold cards to starve the others are searched."""
        key = node.key
        cached = self.positions.get(key)
        if cached is not None:
            return cached
        state = node.state
        piles = table_piles(state.piles)
        hand = cards_mask(state.hands[PLAYER_SEAT])
        found = turn_positions(self.table_rules, hand, piles)
        self.spend(0, len(found))
        next_seat = (PLAYER_SEAT + 1) % state.players
        # The cards the next player will hold: its hand and, when there is a stock, the card it draws.
        next_cards = cards_mask(state.hands[next_seat] + state.stock[:1])
        outs: list[int] = []
        # (arrangement rank, penalty, gift, index): a hand's arrangements by least gift, the best of every
        # hand before the second of any, so that the first positions tried are different hands. Each key is
        # packed into one integer whose order is the tuple's (every field is below 2 ** its width: a gift
        # and a penalty count cards, at most 52 and 88), since integers sort far faster than tuples.
        width = len(found).bit_length()
        arrangements: dict[int, list[int]] = {}
        for index, position in enumerate(found):
            if position.out:
                outs.append(index)
                continue
            given = gift_to(self.table_rules, position.piles, next_cards)
            arrangements.setdefault(position.hand, []).append(given << width | index)
        shedding: list[int] = []
        starving: list[int] = []
        index_mask = (1 << width) - 1
        for held, options in arrangements.items():
            penalty = penalty_of(held)
            options.sort()
            for rank, option in enumerate(options):
                given, index = option >> width, option & index_mask
                shedding.append(((rank << _PENALTY_BITS | penalty) << _GIFT_BITS | given) << width | index)
                starving.append(((rank << _GIFT_BITS | given) << _PENALTY_BITS | penalty) << width | index)
        shedding.sort()
        starving.sort()
        order = dict.fromkeys(outs)
        for shed, starve in zip(shedding, starving, strict=True):
            order.setdefault(shed & index_mask)
            order.setdefault(starve & index_mask)
        ordered = [found[index] for index in order]
        self.positions[key] = ordered
        # The root position (no move) never empties the hand, so `shedding` is never empty.
        least_index = shedding[0] & index_mask
        least_penalty = shedding[0] >> (width + _GIFT_BITS) & ((1 << _PENALTY_BITS) - 1)
        self.stops[key] = -least_penalty
        if self.allow_stop:
            stop = found[least_index]
            self.offer(-least_penalty, node.line + tuple(map(engine_move, stop.moves)), BEAM)
        return ordered

    def stop_value(self, node: _Node) -> int:
        """The result of leaving the hand unfinished in this turn, once it has shed all it can."""
        self.ordered_positions(node)
        return self.stops[node.key]

    def child(self, node: _Node, index: int) -> _Node:
        """The node after ending this turn in its `index`-th position and the computer turns that follow;
        each new one counts against the budget."""
        key = (node.key, index)
        made = self.children.get(key)
        if made is not None:
            return made
        position = self.ordered_positions(node)[index]
        self.spend(1, 0)
        state = node.state
        moves = [engine_move(move) for move in position.moves]
        if not position.out:
            moves.append(END_TURN)
        for move in moves:
            state = apply(state, move, seat=PLAYER_SEAT)
        state = computer_turns(state, self.deal.levels)
        made = _Node(state, node.line + tuple(moves))
        self.children[key] = made
        if state.status != PLAYING:
            self.offer(outcome_of(state)[0], made.line, BEAM)
        return made

    def value(self, node: _Node) -> int:
        """What a node is worth to the beam: the better of the two greedy lines from it, one that always
        sheds the most and one that always gives the next player the least."""
        key = node.key
        cached = self.values.get(key)
        if cached is None:
            cached = max(self.rollout(node, policy) for policy in ROLLOUT_POLICIES)
            self.values[key] = cached
        return cached

    def rollout(self, node: _Node, policy: int) -> int:
        """The best result on the greedy line from this node that always ends its turn in its `policy`-th
        position (or its last, when it has fewer), to the end of the hand; stopping on the way counts when
        allowed."""
        key = (node.key, policy)
        cached = self.rollouts.get(key)
        if cached is not None:
            return cached
        if node.state.status != PLAYING:
            value = outcome_of(node.state)[0]
        else:
            positions = self.ordered_positions(node)
            value = self.rollout(self.child(node, min(policy, len(positions) - 1)), policy)
            if self.allow_stop:
                value = max(value, self.stop_value(node))
        self.rollouts[key] = value
        return value

    def beam(self, root: _Node, width: int, branching: int) -> bool:
        """One round: from each node of the beam, the first `branching` children, valued by rollout; the best
        `width` of them (one per distinct state) form the next beam. True when nothing was left out, so that
        the round searched every line."""
        complete = True
        beam = [root]
        while beam:
            scored: dict[StateKey, tuple[int, int, _Node]] = {}
            order = 0
            for node in beam:
                positions = len(self.ordered_positions(node))
                complete = complete and positions <= branching
                for index in range(min(branching, positions)):
                    child = self.child(node, index)
                    if child.state.status != PLAYING:
                        continue
                    key = child.key
                    value = self.value(child)
                    if key not in scored:
                        scored[key] = (-value, order, child)
                        order += 1
            complete = complete and len(scored) <= width
            beam = [node for _, _, node in sorted(scored.values(), key=lambda entry: entry[:2])[:width]]
        return complete


def par_search(
    deal: RevealedDeal,
    *,
    node_budget: int = DEFAULT_NODE_BUDGET,
    time_limit: float | None = None,
    allow_stop: bool = True,
    seed_lines: Sequence[tuple[str, Sequence[Move]]] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Par:
    """The best line found for the player on `deal` within `node_budget` nodes (a node: one way of ending
    one of the player's turns replayed with the computer turns after it, or POSITIONS_PER_NODE end-of-turn
    positions listed and ranked) and, if given, `time_limit` seconds. The same deal and budget always give
    the same line; a time limit cuts the search wherever it is. `seed_lines` (method name, moves) start the
    search off; by default the lines of the normal and sharp computer players in seat 0. The line returned
    has been replayed through `step` from a fresh daily game."""
    if node_budget < 1:
        raise ValueError("the node budget is at least 1")
    # The search keeps many small tuples alive, which the cyclic collector's passes would walk again and
    # again; it leaves no cycle that needs it.
    with no_cyclic_gc():
        return _par_search(deal, node_budget, time_limit, allow_stop, seed_lines, clock)


def _par_search(
    deal: RevealedDeal,
    node_budget: int,
    time_limit: float | None,
    allow_stop: bool,
    seed_lines: Sequence[tuple[str, Sequence[Move]]] | None,
    clock: Callable[[], float],
) -> Par:
    started = clock()
    if seed_lines is None:
        seed_lines = [(level, level_line(deal, level)) for level in SEED_LEVELS]
    search = _Search(
        deal=deal,
        allow_stop=allow_stop,
        node_budget=node_budget,
        deadline=None if time_limit is None else started + time_limit,
        clock=clock,
        table_rules=TableRules.of(deal.rules),
    )
    for method, moves in seed_lines:
        outcome = replay_line(deal, moves)
        if outcome.finished or allow_stop:
            search.offer(outcome.result, tuple(moves), method)
    root = _Node(daily_start(deal), ())
    width, branching, completed = FIRST_WIDTH, FIRST_BRANCHING, 0
    budget_reached = False
    try:
        if root.state.status != PLAYING:
            search.offer(outcome_of(root.state)[0], (), BEAM)
        else:
            while not search.beam(root, width, branching):
                completed = width
                width, branching = width * 2, branching * 2
            completed = width
    except _BudgetSpent:
        budget_reached = True
    best = search.best
    if best is None:
        raise ValueError("the search found no line: the node budget is too small to play one out")
    outcome = replay_line(deal, best.line)
    if outcome.result != best.result:
        raise RuntimeError(f"the line found scores {outcome.result} on replay, not {best.result}")
    return Par(
        result=outcome.result,
        turns=outcome.turns,
        moves=best.line,
        finished=outcome.finished,
        method=best.method,
        node_budget=node_budget,
        nodes=search.nodes,
        turns_replayed=search.turns_replayed,
        positions=search.positions_listed,
        budget_reached=budget_reached,
        width=completed,
    )
