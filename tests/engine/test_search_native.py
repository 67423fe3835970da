"""Sharp's search in C (games/engine/players/_search_native.c) finds exactly what search.py's _Search finds:
the same candidates with the same scores, bit for bit, the same node count, the same budget and cutoff flags,
on positions of every rule set, from random tables and from real play, at every kind of budget. Built beside
the compiled engine; the pure-Python build never loads it (those tests skip there, and in CI the compiled run
fails if it is missing)."""

import hashlib
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import BUILD, END_TURN, PLAYING, apply, legal_moves, make_rules, new_game, observe
from games.engine.masks import ALL_CARDS, KINGS, NOT_KINGS
from games.engine.players import search as search_module
from games.engine.players.rollout import Deal, PlayOutRandom, SharedDraws, Table, play_out, python_play_out
from games.engine.players.search import python_search, search, threat_of
from games.engine.players.table import Piles, TableRules, cards_mask, table_cards, table_piles, table_rules
from tests.support.players import random_search_table, random_table

PRESETS = ["classic", "casual", "any_space"]


@pytest.fixture(autouse=True)
def _native_built() -> None:
    if search_module.NATIVE is not None:
        return
    if BUILD == "mypyc" and os.environ.get("CI"):
        # CI compiles the engine (.ci/run) and the C search with it: there, a missing one is a failure.
        pytest.fail("the engine is compiled but its C search (_search_native) was not built")
    pytest.skip(f"the C search is not built here (the engine's build: {BUILD})")


def _same(rules: TableRules, hand: int, piles: tuple[int, ...], unseen: int, **options: object) -> None:
    native = search(rules, hand, piles, unseen, **options)  # type: ignore[arg-type]
    python = python_search(rules, hand, piles, unseen, **options)  # type: ignore[arg-type]
    assert native == python
    # Scores equal as floats, not only close: the same steps of arithmetic.
    for ours, theirs in zip(native.candidates, python.candidates, strict=True):
        assert repr(ours.score) == repr(theirs.score)


@pytest.mark.parametrize("preset", PRESETS)
def test_the_c_search_finds_what_the_python_search_finds_on_random_tables(preset: str) -> None:
    rules = TableRules.of(make_rules(preset))
    rng = random.Random(preset + " native")
    for _ in range(500):
        hand_mask, encoded, unseen = random_search_table(rng)
        _same(
            rules,
            hand_mask,
            encoded,
            unseen,
            threat=rng.random() * 3,
            node_budget=rng.choice((1, 2, 7, 33, 200, 1000)),
            keep=rng.choice((1, 2, 3, 6)),
        )


@pytest.mark.parametrize("preset", PRESETS)
def test_the_c_search_finds_what_the_python_search_finds_in_real_play(preset: str) -> None:
    """Every position of random hands, as sharp sees it at its decision: its hand, the table, the cards it
    cannot see, the threat of the others' hand sizes, at its default budget and the play-outs'."""
    rules = make_rules(preset)
    table = TableRules.of(rules)
    rng = random.Random(preset + " native play")
    for hand_number in range(6):
        seed = hashlib.sha256(f"native {preset} {hand_number}".encode()).digest()
        state, _ = new_game(rules=rules, players=4, seed=seed, target_score=None)
        while state.status == PLAYING:
            seat = state.current_seat
            observation = observe(state, seat)
            hand = cards_mask(observation["hand"])
            on_table = table_cards(observation["piles"])
            piles = table_piles(observation["piles"])
            unseen = ALL_CARDS & ~hand & ~on_table
            threat = threat_of(observation["hand_counts"], seat)
            _same(table, hand, piles, unseen, threat=threat, keep=6)
            _same(table, hand, piles, unseen, threat=threat, node_budget=150)
            moves = legal_moves(state)
            state = apply(state, END_TURN if rng.random() < 0.3 else rng.choice(moves))


def _piles() -> st.SearchStrategy[tuple[int, ...]]:
    side = st.one_of(
        st.just(-1), st.tuples(st.integers(0, 51), st.integers(0, 51)).map(lambda p: p[0] * 64 + p[1])
    )
    corner = st.integers(-1, 51)
    return st.tuples(side, side, side, side, corner, corner, corner, corner)


@settings(max_examples=300, deadline=None)
@given(
    hand=st.integers(0, ALL_CARDS),
    piles=_piles(),
    unseen=st.integers(0, ALL_CARDS),
    side=st.sampled_from(["any", "no_king"]),
    corner=st.sampled_from(["any", "king"]),
    king_pile=st.booleans(),
    threat=st.floats(0, 4, allow_nan=False),
    budget=st.integers(1, 120),
    keep=st.integers(1, 8),
)
def test_the_c_search_agrees_on_any_encoded_table(
    hand: int,
    piles: tuple[int, ...],
    unseen: int,
    side: str,
    corner: str,
    king_pile: bool,
    threat: float,
    budget: int,
    keep: int,
) -> None:
    """Tables no game reaches (a card twice, a hand of 52) are still the same arithmetic on both sides."""
    rules = table_rules(side, corner, king_pile)
    _same(rules, hand, piles, unseen, threat=threat, node_budget=budget, keep=keep)


def test_a_search_begun_past_its_deadline_stops_alike_at_its_second_node() -> None:
    rules = TableRules.of(make_rules("classic"))
    rng = random.Random("native deadline")
    for _ in range(100):
        hand, piles = random_table(rng)
        hand_mask, encoded = cards_mask(hand), table_piles(piles)
        unseen = ALL_CARDS & ~hand_mask & ~table_cards(piles)
        native = search(rules, hand_mask, encoded, unseen, keep=3, deadline_ns=0)
        python = python_search(rules, hand_mask, encoded, unseen, keep=3, deadline_ns=0)
        assert native == python
        # The root is visited; the clock is read first at the second node, which stops there.
        assert native.nodes == 1
        assert native.cut_off == native.budget_reached


def test_the_c_search_holds_search_pys_weights_and_card_tables() -> None:
    from games.engine.masks import FITTERS, TARGETS
    from games.engine.players import _search_native

    held = _search_native.constants()
    assert held["HELD_FOR_ME"] == search_module.HELD_FOR_ME
    assert held["CHAIN_WEIGHTS"] == search_module.CHAIN_WEIGHTS
    assert held["CLOCK_EVERY"] == search_module.CLOCK_EVERY
    assert held["GIFT_COST"] == search_module.GIFT_COST
    assert held["KINGS"] == KINGS and ALL_CARDS & ~held["KINGS"] == NOT_KINGS
    assert held["FITTERS"] == FITTERS
    assert held["TARGETS"] == TARGETS


@pytest.mark.parametrize(
    ("piles", "hand", "error"),
    [
        ((0,) * 7, 0, TypeError),
        ([0] * 8, 0, TypeError),
        ((-2, 0, 0, 0, 0, 0, 0, 0), 0, ValueError),
        ((64 * 52, 0, 0, 0, 0, 0, 0, 0), 0, ValueError),
        ((0, 0, 0, 0, 52, 0, 0, 0), 0, ValueError),
        ((63, 0, 0, 0, 0, 0, 0, 0), 0, ValueError),
        ((0,) * 8, 1 << 52, ValueError),
        ((0,) * 8, -1, OverflowError),
    ],
)
def test_the_c_search_refuses_what_is_not_a_table(piles: object, hand: int, error: type[Exception]) -> None:
    from games.engine.players import _search_native

    with pytest.raises(error):
        _search_native.search(hand, piles, 0, ALL_CARDS, KINGS, True, 1.0, 10, 1, None)  # type: ignore[arg-type]


# --- the play-outs in C -------------------------------------------------------------------------------------


def _play_out_case(rng: random.Random) -> tuple[Table, Deal, Piles, int, bool, int, int, int, int]:
    """A play-out from a random table: 2 to 4 players, every rule of play-outs either way, hands of up to ten
    cards and a stock of up to twenty from what the table leaves, and a node budget for sharp's own turns."""
    players = rng.choice((2, 3, 4))
    hand, piles = random_table(rng)
    used = cards_mask(hand) | table_cards(piles)
    rest = [card for card in range(52) if not used >> card & 1]
    rng.shuffle(rest)
    seat = rng.randrange(players)
    hands = []
    for other in range(players):
        if other == seat:
            hands.append(cards_mask(hand))
        else:
            size = rng.randint(0, 10)
            hands.append(sum(1 << card for card in rest[:size]))
            rest = rest[size:]
    stock = rest[: rng.randint(0, 20)]
    table = Table(
        rules=table_rules(rng.choice(["any", "no_king"]), rng.choice(["any", "king"]), rng.random() < 0.5),
        players=players,
        seat=seat,
        draw_at_end=rng.random() < 0.3,
        draw_until_playable=rng.random() < 0.3,
        blocked_everyone_scores=rng.random() < 0.5,
    )
    # Draws already made by other candidates of the round, and where this play-out starts reading them.
    made = rng.choice((0, 0, 3, 40))
    first = rng.randint(0, made)
    return (
        table,
        Deal(hands, stock),
        table_piles(piles),
        table_cards(piles),
        rng.random() < 0.5,
        rng.randint(0, players - 1),
        made,
        first,
        rng.choice((1, 5, 20, 100)),
    )


@pytest.mark.parametrize("part", range(4))
def test_the_c_play_out_plays_what_the_python_play_out_plays(part: int) -> None:
    """The same result and work (the share as the same float), the deal left alike, the same draws read and
    made, on 400 random play-outs a part."""
    rng = random.Random(f"native play-out {part}")
    for case in range(400):
        table, deal, piles, on_table, played, idle_turns, made, first, budget = _play_out_case(rng)
        sides = []
        for run in (play_out, python_play_out):
            draws = SharedDraws(case)
            for index in range(made):
                draws.draw(index)
            chooser = PlayOutRandom(draws)
            chooser._next = first
            copy = Deal(list(deal.hands), list(deal.stock))
            value, work = run(table, copy, piles, on_table, played, idle_turns, chooser, budget)
            sides.append((repr(value), work, copy.hands, copy.stock, chooser._next, draws._values))
        assert sides[0] == sides[1]


def test_the_c_play_out_holds_rollout_pys_constants() -> None:
    from games.engine.players import _search_native, rollout

    held = _search_native.constants()
    assert held["MAX_PLAY_OUT_TURNS"] == rollout.MAX_PLAY_OUT_TURNS
    assert rollout.NATIVE_PLAY_OUT is _search_native.play_out


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({1: 5}, ValueError),
        ({0: 2, 1: 2}, ValueError),
        ({8: [0]}, TypeError),
        ({8: (0, 0)}, TypeError),
        ({8: [1 << 52, 0]}, ValueError),
        ({9: [52]}, ValueError),
        ({9: list(range(52)) + [0]}, TypeError),
        ({10: (0,) * 7}, TypeError),
        ({10: (-2,) + (0,) * 7}, ValueError),
        ({10: (60,) + (-1,) * 7}, ValueError),
        ({13: -1}, ValueError),
        ({13: 2**63 - 1}, ValueError),
        ({14: (0.5,)}, TypeError),
        ({15: 3}, TypeError),
        ({16: -1}, ValueError),
        ({17: 0}, ValueError),
    ],
)
def test_the_c_play_out_refuses_what_is_not_a_play_out(
    change: dict[int, object], error: type[Exception]
) -> None:
    from games.engine.players import _search_native

    arguments: list[object] = [0, 2, ALL_CARDS, KINGS, True, False, False, True, [1, 2], [5, 6]]
    arguments += [(-1,) * 8, 0, False, 0, [], random.Random(0).random, 0, 10]
    for index, value in change.items():
        arguments[index] = value
    with pytest.raises(error):
        _search_native.play_out(*arguments)  # type: ignore[arg-type]
    # The arguments as they were are a play-out.
    value, work, _ = _search_native.play_out(
        0,
        2,
        ALL_CARDS,
        KINGS,
        True,
        False,
        False,
        True,
        [1, 2],
        [5, 6],
        (-1,) * 8,
        0,
        False,
        0,
        [],
        random.Random(0).random,
        0,
        10,
    )
    assert 0.0 <= value <= 1.0 and work > 0
