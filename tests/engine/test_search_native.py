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
from games.engine.players.search import python_search, search, threat_of
from games.engine.players.table import TableRules, cards_mask, table_cards, table_piles, table_rules
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
        ((0,) * 8, 1 << 52, ValueError),
        ((0,) * 8, -1, OverflowError),
    ],
)
def test_the_c_search_refuses_what_is_not_a_table(piles: object, hand: int, error: type[Exception]) -> None:
    from games.engine.players import _search_native

    with pytest.raises(error):
        _search_native.search(hand, piles, 0, ALL_CARDS, KINGS, True, 1.0, 10, 1, None)  # type: ignore[arg-type]
