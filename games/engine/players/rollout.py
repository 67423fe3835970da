"""Sharp's play-outs: deals of the cards its seat cannot see that agree with what it knows, and hands played
from them to the end on the compact table, the others by normal's rule and sharp's own turns by its search.

Everything here runs on one sampled deal at a time: a deal is a guess, built only from the seat's own
observation and what the public events tell (`inference`), never from the hidden state.
"""

import _random
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from games.engine.deal import Uniform
from games.engine.masks import ALL_CARDS, card_count
from games.engine.players.inference import HandKnowledge
from games.engine.players.normal import normal_move
from games.engine.players.search import NATIVE, search, threat_of
from games.engine.players.table import (
    PLAY,
    Piles,
    TableMove,
    TableRules,
    apply_move,
    bit_list,
    penalty_of,
    playable,
)

# A play-out that has not ended after this many turns is scored as blocked where it stands; no hand comes near
# it (the stock runs out, and then every trip round the table plays a card or ends the hand).
MAX_PLAY_OUT_TURNS: Final = 400

# The play-out in C (_search_native.c, beside the search), as rollout.py calls it.
NativePlayOut = Callable[
    [
        int,
        int,
        int,
        int,
        bool,
        bool,
        bool,
        bool,
        list[int],
        list[int],
        Piles,
        int,
        bool,
        int,
        list[float],
        Callable[[], float],
        int,
        int,
    ],
    tuple[float, int, int],
]


def _native_play_out() -> NativePlayOut | None:
    """The C play-out where the C search was built (search.py checks the module's weights and tables), once
    its turn limit is checked against this module's."""
    if NATIVE is None:
        return None
    from games.engine.players import _search_native

    held = _search_native.constants()
    if held["MAX_PLAY_OUT_TURNS"] != MAX_PLAY_OUT_TURNS:
        raise ImportError(
            "games/engine/players/_search_native.c's play-outs differ from rollout.py's: rebuild it"
        )
    return _search_native.play_out


NATIVE_PLAY_OUT: Final = _native_play_out()


@dataclass(frozen=True, slots=True)
class Table:
    """The rules of play-outs and who plays: the seat sharp plays, of `players`."""

    rules: TableRules
    players: int
    seat: int
    draw_at_end: bool
    draw_until_playable: bool
    blocked_everyone_scores: bool


@dataclass(slots=True)
class Deal:
    """One guess at the hidden cards: every seat's hand (sharp's own is its real one) and the stock, whose
    top is its last card."""

    hands: list[int]
    stock: list[int]


class SharedDraws:
    """The draws of one generator seeded by sharp's own stream, kept as they are made, so that each
    candidate's play-out of a deal reads the same sequence from its start: seeding a Mersenne Twister costs
    more than the few dozen draws a play-out makes, and a round seeded it once per candidate."""

    __slots__ = ("_random", "_values")

    def __init__(self, seed: int) -> None:
        # random.Random's C base: seeded from an integer and drawing exactly as random.Random(seed) does
        # (random.Random's own __init__ and seed, which run as interpreted Python, only pass an integer on to
        # it), made once a round of play-outs.
        self._random = _random.Random(seed)
        self._values: list[float] = []

    def draw(self, index: int) -> float:
        """The generator's draw number `index` (0, 1, ...); draws are asked for in order."""
        values = self._values
        if index < len(values):
            return values[index]
        value = self._random.random()
        values.append(value)
        return value


class PlayOutRandom(Uniform):
    """Normal's random choices in one play-out: the shared draws of its round, read from the first."""

    __slots__ = ("_draws", "_next")

    def __init__(self, draws: SharedDraws) -> None:
        self._draws = draws
        self._next = 0

    def uniform(self, m: int) -> int:
        index = self._next
        self._next = index + 1
        return int(self._draws.draw(index) * m)


# random.Random's sample and shuffle, step for step as Python 3.11 makes them (the same draws, the same
# results): theirs run as interpreted Python, and a deal is sampled every round of sharp's play-outs.


def _below(rng: random.Random, n: int) -> int:
    """random.Random._randbelow(n): an integer in 0..n-1 from getrandbits, redrawn while it is too large."""
    width = n.bit_length()
    value = rng.getrandbits(width)
    while value >= n:
        value = rng.getrandbits(width)
    return value


def draw_sample(rng: random.Random, population: list[int], k: int) -> list[int]:
    """rng.sample(population, k)."""
    n = len(population)
    if not 0 <= k <= n:
        raise ValueError("Sample larger than population or is negative")
    result = [0] * k
    # Python's choice between a pool of the population and a set of the positions chosen.
    setsize = 21
    if k > 5:
        setsize += 4 ** math.ceil(math.log(k * 3, 4))
    if n <= setsize:
        pool = list(population)
        for i in range(k):
            j = _below(rng, n - i)
            result[i] = pool[j]
            pool[j] = pool[n - i - 1]
    else:
        selected: set[int] = set()
        for i in range(k):
            j = _below(rng, n)
            while j in selected:
                j = _below(rng, n)
            selected.add(j)
            result[i] = population[j]
    return result


def draw_shuffle(rng: random.Random, cards: list[int]) -> None:
    """rng.shuffle(cards)."""
    for i in range(len(cards) - 1, 0, -1):
        j = _below(rng, i + 1)
        cards[i], cards[j] = cards[j], cards[i]


def sample_deal(
    rng: random.Random,
    table: Table,
    hand: int,
    hand_counts: Sequence[int],
    unseen: int,
    stock_size: int,
    knowledge: HandKnowledge,
) -> Deal:
    """Deals the unseen cards: to each other seat as many as it holds, none that it is known not to hold
    (its oldest cards first, bound the most; a card is dealt from all that are left when none it may hold
    is), and `stock_size` of the rest to the stock in a random order. The most constrained seat is dealt
    first. In a game the unseen cards are exactly the other hands and the stock; a position laid out by hand
    may leave some over, which are set aside, or too few, and then the last hands and the stock come short."""
    others = [other for other in range(table.players) if other != table.seat]
    others.sort(key=lambda other: (-card_count(knowledge.excluded[other] & unseen), other))
    hands = [0] * table.players
    hands[table.seat] = hand
    pool = unseen
    for other in others:
        count = hand_counts[other]
        recent = knowledge.recent[other][:count]
        bounds = [(knowledge.excluded[other], count - len(recent))] + [
            (bound, 1) for bound in reversed(recent)
        ]
        dealt = 0
        for bound, wanted in bounds:
            allowed = bit_list(pool & ~bound)
            if len(allowed) < wanted:
                # Too few cards it may hold are left: the rest come from all that are left.
                chosen = allowed + draw_sample(
                    rng, bit_list(pool & bound), min(wanted - len(allowed), card_count(pool & bound))
                )
            else:
                chosen = draw_sample(rng, allowed, wanted)
            for card in chosen:
                dealt |= 1 << card
            pool &= ~dealt
        hands[other] = dealt
    rest = bit_list(pool)
    draw_shuffle(rng, rest)
    return Deal(hands, rest[:stock_size])


def _blocked_share(table: Table, hands: list[int]) -> float:
    penalties = [penalty_of(hand) for hand in hands]
    if not table.blocked_everyone_scores:
        fewest = min(card_count(hand) for hand in hands)
        penalties = [
            0 if card_count(hand) == fewest else penalty
            for hand, penalty in zip(hands, penalties, strict=True)
        ]
    lowest = min(penalties)
    if penalties[table.seat] != lowest:
        return 0.0
    return 1 / penalties.count(lowest)


def _own_turn(
    table: Table, hands: list[int], piles: Piles, on_table: int, node_budget: int
) -> tuple[Piles, int, bool, int]:
    seat = table.seat
    hand = hands[seat]
    threat = threat_of([card_count(other) for other in hands], seat)
    result = search(
        table.rules, hand, piles, ALL_CARDS & ~hand & ~on_table, threat=threat, node_budget=node_budget
    )
    played = False
    for move in result.moves:
        hand, piles = apply_move(hand, piles, move)
        if move[0] == PLAY:
            played = True
            on_table |= 1 << move[1]
    hands[seat] = hand
    return piles, on_table, played, result.nodes


def _normal_turn(
    table: Table, hands: list[int], seat: int, piles: Piles, on_table: int, chooser: PlayOutRandom
) -> tuple[Piles, int, bool, int]:
    hand = hands[seat]
    played = False
    work = 1
    while hand:
        move = normal_move(table.rules, hand, piles, chooser)
        if move is None:
            break
        work += 1
        hand, piles = apply_move(hand, piles, move)
        if move[0] == PLAY:
            played = True
            on_table |= 1 << move[1]
    hands[seat] = hand
    return piles, on_table, played, work


def play_out(
    table: Table,
    deal: Deal,
    piles: Piles,
    on_table: int,
    played: bool,
    idle_turns: int,
    chooser: PlayOutRandom,
    node_budget: int,
) -> tuple[float, int]:
    """Ends the turn of the seat sharp plays, whose hand and table are as it leaves them (`played` says
    whether it played a card this turn), and plays the hand to its end. Returns that seat's share of the win
    (1 for going out, a share of a blocked hand's lowest penalty, else 0) and the work it took, in positions
    searched or moved through. `deal` is played out in place, and `chooser` read on from where it was.

    Where the C search was built (the compiled engine), the play-out runs in C too
    (_search_native.play_out, tests/engine/test_search_native.py): the same turns, draws, choices, result
    and work as python_play_out."""
    if NATIVE_PLAY_OUT is None:
        return python_play_out(table, deal, piles, on_table, played, idle_turns, chooser, node_budget)
    rules, draws = table.rules, chooser._draws
    value, work, chooser._next = NATIVE_PLAY_OUT(
        table.seat,
        table.players,
        rules.side_cards,
        rules.corner_cards,
        rules.king_pile_to_corner,
        table.draw_at_end,
        table.draw_until_playable,
        table.blocked_everyone_scores,
        deal.hands,
        deal.stock,
        piles,
        on_table,
        played,
        idle_turns,
        draws._values,
        draws._random.random,
        chooser._next,
        node_budget,
    )
    return value, work


def python_play_out(
    table: Table,
    deal: Deal,
    piles: Piles,
    on_table: int,
    played: bool,
    idle_turns: int,
    chooser: PlayOutRandom,
    node_budget: int,
) -> tuple[float, int]:
    """play_out as rollout.py makes it, in Python (compiled or not), whether or not the C one was built."""
    hands, stock = deal.hands, deal.stock
    seat = current = table.seat
    rules = table.rules
    work = 0
    for _ in range(MAX_PLAY_OUT_TURNS):
        stock_was_empty = not stock
        if table.draw_at_end and stock:
            hands[current] |= 1 << stock.pop()
        idle_turns = 0 if played or not stock_was_empty else idle_turns + 1
        if idle_turns >= table.players:
            return _blocked_share(table, hands), work
        current = (current + 1) % table.players
        if not table.draw_at_end and stock:
            hands[current] |= 1 << stock.pop()
            if table.draw_until_playable:
                while stock and not hands[current] & playable(rules, piles):
                    hands[current] |= 1 << stock.pop()
        if current == seat:
            piles, on_table, played, spent = _own_turn(table, hands, piles, on_table, node_budget)
        else:
            piles, on_table, played, spent = _normal_turn(table, hands, current, piles, on_table, chooser)
        work += spent
        if not hands[current]:
            return (1.0 if current == seat else 0.0), work
    return _blocked_share(table, hands), work


def after_moves(
    hand: int, piles: Piles, on_table: int, moves: Sequence[TableMove]
) -> tuple[int, Piles, int, bool]:
    """The hand, table and cards on it after `moves`, and whether any of them played a card."""
    played = False
    for move in moves:
        hand, piles = apply_move(hand, piles, move)
        if move[0] == PLAY:
            played = True
            on_table |= 1 << move[1]
    return hand, piles, on_table, played
