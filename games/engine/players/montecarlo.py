"""Sharp's choice among the best end positions of its search, by play-outs of sampled deals.

Sharp's search ranks every end-of-turn position it can reach by a fixed judgement of the table. Here the best
few of them (one for each hand it can be left with) are tried against deals of the unseen cards that agree
with what the seat knows: each deal is played to the end of the hand from each candidate (the same deal and
the same random choices for every candidate, so that they are compared on equal terms), and the candidate
that wins most often is played; a tie goes to the one the search ranks higher. After a few deals a candidate
far behind the leader is played out no further, so the rest of the work goes to those still in contention,
and once one alone is left it is played.

The limit is a budget of deals and of work (positions searched or moved through), so a choice depends only on
the observation, the public events and the turn's seeded stream, and a game replays exactly. A wall-clock
cutoff is a safety valve on top: past it the search stops, or the sampling ends with the last whole round of
play-outs, and the best candidate so far is played; a decision that hits it is reported as cut off, and only
those decisions depend on timing.
"""

import gc
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

from games.engine.deal import SeededStream
from games.engine.players.inference import HandKnowledge
from games.engine.players.rollout import (
    Deal,
    PlayOutRandom,
    SharedDraws,
    Table,
    after_moves,
    play_out,
    sample_deal,
)
from games.engine.players.search import DEFAULT_NODE_BUDGET, SearchResult, search
from games.engine.players.table import Piles, TableMove

# How many of the search's best end positions are tried, against at most how many sampled deals.
DEFAULT_CANDIDATES: Final = 6
DEFAULT_SAMPLES: Final = 48
# The work of one decision, in positions searched or moved through (its search's and its play-outs'): no new
# round of play-outs starts once it is spent. Work tracks time closely, and unlike time it is deterministic.
DEFAULT_WORK: Final = 3500
# The node budget of sharp's own later turns inside a play-out: a small one makes play-outs cheap, so more
# deals fit in the work, which the simulator found worth more than a deeper search of turns to come.
PLAY_OUT_NODE_BUDGET: Final = 20
# A candidate that trails the leader by more than this many wins after PRUNE_AFTER deals is played out no
# further, so that the work goes to the candidates still in contention (0 never drops one).
DEFAULT_PRUNE: Final = 2.0
PRUNE_AFTER: Final = 6
# The wall-clock safety valve, in milliseconds from the start of the decision.
DEFAULT_CUTOFF_MS: Final = 40.0


@dataclass(frozen=True, slots=True)
class Budget:
    """What one sharp decision may spend: search nodes, candidates, sampled deals, work, the node budget of
    its own turns in play-outs, and the time cutoff."""

    node_budget: int = DEFAULT_NODE_BUDGET
    candidates: int = DEFAULT_CANDIDATES
    samples: int = DEFAULT_SAMPLES
    work: int = DEFAULT_WORK
    play_out_node_budget: int = PLAY_OUT_NODE_BUDGET
    cutoff_ms: float = DEFAULT_CUTOFF_MS
    prune: float = DEFAULT_PRUNE
    prune_after: int = PRUNE_AFTER


@dataclass(frozen=True, slots=True)
class Choice:
    """The moves chosen, the search they came from, how many play-outs were counted, and whether the
    wall-clock cutoff fired."""

    moves: tuple[TableMove, ...]
    search: SearchResult
    play_outs: int
    cut_off: bool


@dataclass(frozen=True, slots=True)
class Position:
    """What the seat knows at the start of its decision."""

    hand: int
    piles: Piles
    on_table: int
    unseen: int
    hand_counts: tuple[int, ...]
    stock: int
    played_this_turn: bool
    idle_turns: int
    threat: float


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Holds off Python's cyclic garbage collector: a decision allocates many short-lived tuples, freed as
    they go, and the collections they would set off cost time (the oldest generation's, whole milliseconds).
    It is switched back on after, if it was on; the decision leaves no cycles for it to collect then (each
    search's tables are freed as it ends)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def choose(
    table: Table,
    position: Position,
    knowledge: HandKnowledge,
    stream: SeededStream,
    budget: Budget,
    deadline_ns: int | None = None,
) -> Choice:
    """The end position sharp plays towards from `position`, and how the choice was made. The wall-clock
    cutoff falls at `deadline_ns` when given, else `budget.cutoff_ms` from now."""
    with no_cyclic_gc():
        return _choose(table, position, knowledge, stream, budget, deadline_ns)


def _choose(
    table: Table,
    position: Position,
    knowledge: HandKnowledge,
    stream: SeededStream,
    budget: Budget,
    deadline_ns: int | None,
) -> Choice:
    deadline = time.perf_counter_ns() + int(budget.cutoff_ms * 1e6) if deadline_ns is None else deadline_ns
    found = search(
        table.rules,
        position.hand,
        position.piles,
        position.unseen,
        threat=position.threat,
        node_budget=budget.node_budget,
        keep=budget.candidates,
        deadline_ns=deadline,
    )
    candidates = found.candidates
    if found.cut_off or found.score[0] == 1 or len(candidates) < 2 or budget.samples < 1:
        return Choice(found.moves, found, 0, found.cut_off)
    ends = [
        after_moves(position.hand, position.piles, position.on_table, candidate.moves)
        for candidate in candidates
    ]
    rng = random.Random(stream.next_u64())
    totals = [0.0] * len(candidates)
    play_outs = 0
    work = found.nodes
    cut_off = False
    alive = list(range(len(candidates)))
    for round_number in range(budget.samples):
        if work >= budget.work:
            break
        if budget.prune > 0 and round_number >= budget.prune_after and len(alive) > 1:
            leader = max(totals[index] for index in alive)
            alive = [index for index in alive if totals[index] >= leader - budget.prune]
            if len(alive) == 1:
                # The others are dropped: the one left is played, and more deals would not change that.
                break
        deal = sample_deal(
            rng, table, position.hand, position.hand_counts, position.unseen, position.stock, knowledge
        )
        # Every candidate's play-out of this deal makes the same random choices, from one generator.
        draws = SharedDraws(rng.getrandbits(64))
        round_values: list[float] = []
        for index in alive:
            hand, piles, on_table, played = ends[index]
            hands = list(deal.hands)
            hands[table.seat] = hand
            value, spent = play_out(
                table,
                Deal(hands, list(deal.stock)),
                piles,
                on_table,
                played or position.played_this_turn,
                position.idle_turns,
                PlayOutRandom(draws),
                budget.play_out_node_budget,
            )
            round_values.append(value)
            work += spent
            if time.perf_counter_ns() > deadline:
                cut_off = True
                break
        if cut_off:
            break
        play_outs += len(round_values)
        for index, value in zip(alive, round_values, strict=True):
            totals[index] += value
    best = max(alive, key=lambda index: (totals[index], -index))
    return Choice(candidates[best].moves, found, play_outs, cut_off)
