"""The legal moves and the shuffle in C (games/engine/_native.c) are exactly game.py's and deal.py's: the
same shared move objects in the same order, on random tables under every rule set, on every position of real
play, from any sequence of cards, and the same error for what is not a card or a pile; the same deck from
every seed, of any length, and from the test vectors. Built beside the compiled engine; the pure-Python build
never loads it (these tests skip there, and in CI the compiled run fails if it is missing)."""

import hashlib
import os
import random
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import BUILD, END_TURN, PLAYING, apply, deal, game, legal_moves, make_rules, new_game
from games.engine.cards import DECK
from games.engine.deal import hand_seed, python_shuffle, shuffle
from games.engine.game import _space_cards, position_moves, python_position_moves
from games.engine.masks import CARDS
from games.engine.moves import PILE_MOVE_OF_CODE, PILES, PLAY_OF_CODE, Play
from games.engine.rules import Rules
from tests.support.players import every_rules, random_table, rules_id

PRESETS = ["classic", "casual", "any_space"]


@pytest.fixture(autouse=True)
def _native_built() -> None:
    if game.NATIVE_POSITION_MOVES is not None and deal.NATIVE_SHUFFLE is not None:
        return
    if BUILD == "mypyc" and os.environ.get("CI"):
        # CI compiles the engine (.ci/run) and its C parts with it: there, a missing one is a failure.
        pytest.fail("the engine is compiled but its C legal moves and shuffle (_native) were not built")
    pytest.skip(f"the C legal moves and shuffle are not built here (the engine's build: {BUILD})")


def _same(rules: Rules, hand: Sequence[str], piles: Any) -> list[Any]:
    native = position_moves(rules, hand, piles)
    python = python_position_moves(rules, hand, piles)
    assert native == python
    # The very objects game.py shares, not equal copies.
    assert all(ours is theirs for ours, theirs in zip(native, python, strict=True))
    return native


@pytest.mark.parametrize("rules", every_rules(), ids=rules_id)
def test_the_c_moves_are_the_python_moves_on_random_tables(rules: Rules) -> None:
    rng = random.Random(f"moves native {rules}")
    kinds = {"plays": 0, "pile_moves": 0}
    for _ in range(3000):
        hand, piles = random_table(rng)
        moves = _same(rules, hand, piles)
        kinds["plays"] += sum(1 for move in moves if move in PLAY_OF_CODE)
        kinds["pile_moves"] += sum(1 for move in moves if move in PILE_MOVE_OF_CODE)
    # The tables reach both kinds of move, many times.
    assert kinds["plays"] > 1000 and kinds["pile_moves"] > 100


@pytest.mark.parametrize("preset", PRESETS)
def test_the_c_moves_are_the_python_moves_on_every_position_of_random_play(preset: str) -> None:
    rules = make_rules(preset)
    positions = 0
    for index in range(40):
        rng = random.Random(index)
        seed = hashlib.sha256(f"moves native {preset} {index}".encode()).digest()
        state, _ = new_game(rules=rules, players=rng.choice((2, 3, 4)), seed=seed, target_score=None)
        while state.status == PLAYING:
            moves = legal_moves(state)
            assert moves[:-1] == _same(rules, state.hands[state.current_seat], state.piles)
            state = apply(state, END_TURN if rng.random() < 0.3 else rng.choice(moves))
            positions += 1
    assert positions > 1000


@settings(max_examples=300, deadline=None)
@given(
    st.permutations(DECK),
    st.integers(0, 14),
    st.lists(st.integers(0, 4), min_size=len(PILES), max_size=len(PILES)),
    st.sampled_from(every_rules()),
)
def test_the_c_moves_are_the_python_moves_on_any_deal_of_cards(
    deck: list[str], held: int, sizes: list[int], rules: Rules
) -> None:
    hand, rest = deck[:held], deck[held:]
    piles: dict[str, list[str]] = {}
    for name, size in zip(PILES, sizes, strict=True):
        piles[name], rest = rest[:size], rest[size:]
    _same(rules, hand, piles)


class _Piles(dict[str, Any]):
    """A dict whose piles are read through its own __getitem__."""

    def __getitem__(self, name: str) -> Any:
        return list(super().__getitem__(name))


class _ReadOnce(dict[str, Any]):
    """A dict that refuses to give a pile twice (the Python reads a side's pile again for its pile moves)."""

    def __init__(self, piles: dict[str, list[str]]) -> None:
        super().__init__(piles)
        self.read: set[str] = set()

    def __getitem__(self, name: str) -> Any:
        if name in self.read:
            raise RuntimeError(f"{name} read twice")
        self.read.add(name)
        return super().__getitem__(name)


class _Hand(list[str]):
    """A hand that gives other cards when iterated than it holds."""

    def __iter__(self) -> Iterator[str]:
        return iter(["7H"])


class _Card(str):
    """A string that is not a card's code but hashes and compares as QD."""

    def __hash__(self) -> int:
        return hash("QD")

    def __eq__(self, other: object) -> bool:
        return other == "QD"


def _one_by_one(cards: list[str]) -> Iterator[str]:
    yield from cards


def test_any_sequence_of_cards_and_piles_read_alike() -> None:
    rng = random.Random("moves native shapes")
    rules = make_rules({"preset": "any_space", "king_pile_to_corner": True})
    for _ in range(300):
        hand, piles = random_table(rng)
        expected = _same(rules, hand, piles)

        assert _same(rules, tuple(hand), piles) == expected
        assert _same(rules, hand, _Piles(piles)) == expected
        assert position_moves(rules, _one_by_one(hand), piles) == expected  # type: ignore[arg-type]


def test_what_is_not_plain_data_is_listed_by_the_python_through_its_overrides() -> None:
    """The C declines a subclass (None) before reading any of it, and game.py lists the moves itself."""
    from games.engine import _native

    rules = make_rules("classic")
    side_cards, corner_cards = _space_cards(rules)
    empty: dict[str, list[str]] = {name: [] for name in PILES}
    table = {**empty, "N": ["8S"]}
    assert _native.position_moves(_Hand(["2C"]), table, side_cards, corner_cards, False) is None
    assert _same(rules, _Hand(["2C"]), table) == _same(rules, ["7H"], table)
    assert _native.position_moves(["QD"], _Piles(table), side_cards, corner_cards, False) is None
    assert _native.position_moves([_Card("XX")], empty, side_cards, corner_cards, False) is None
    assert _same(rules, [_Card("XX")], empty) == _same(rules, ["QD"], empty)
    assert _native.position_moves(["QD"], {**empty, "S": ("2H",)}, side_cards, corner_cards, False) is None  # type: ignore[dict-item]
    assert _native.position_moves(_one_by_one(["QD"]), empty, side_cards, corner_cards, False) is None  # type: ignore[arg-type]
    for source in (position_moves, python_position_moves):
        with pytest.raises(RuntimeError, match="N read twice"):
            source(rules, [], _ReadOnce({**empty, "N": ["8S"], "E": ["9H"]}))


@pytest.mark.parametrize(
    "bad", ["XX", "10H", "", "K", "KSS", "ks", "KS ", "K♠", "\udc80S", "S\udc80"], ids=repr
)
@pytest.mark.parametrize("where", ["hand", "top", "side_bottom"])
def test_what_is_not_a_card_raises_the_key_error_the_python_raises(bad: object, where: str) -> None:
    rules = make_rules("classic")
    hand: list[Any] = ["AS", "2H"]
    piles: dict[str, list[Any]] = {name: [] for name in PILES}
    piles["N"] = ["9C", "8D"]
    if where == "hand":
        hand.append(bad)
    elif where == "top":
        piles["E"] = ["QS", bad]
    else:
        piles["W"] = [bad, "5H"]
    with pytest.raises(KeyError) as python:
        python_position_moves(rules, hand, piles)
    with pytest.raises(KeyError) as native:
        position_moves(rules, hand, piles)
    assert native.value.args == python.value.args


@pytest.mark.parametrize("bad", [7, None, b"KS"], ids=repr)
def test_what_is_not_a_string_raises_a_type_error_in_both(bad: object) -> None:
    rules = make_rules("classic")
    piles: dict[str, list[Any]] = {name: [] for name in PILES}
    tables: list[tuple[list[Any], dict[str, list[Any]]]] = [([bad], piles), (["AS"], {**piles, "N": [bad]})]
    for hand, table in tables:
        with pytest.raises(TypeError):
            python_position_moves(rules, hand, table)
        with pytest.raises(TypeError):
            position_moves(rules, hand, table)


def test_a_corner_pile_s_bottom_card_is_never_read_by_either() -> None:
    rules = make_rules("classic")
    piles: dict[str, list[str]] = {name: [] for name in PILES}
    piles["NE"] = ["not a card", "QS"]
    assert _same(rules, ["JH", "JD", "KC"], piles) != []


def test_a_missing_pile_raises_the_key_error_the_python_raises() -> None:
    rules = make_rules("classic")
    piles: dict[str, list[str]] = {name: [] for name in PILES if name != "SW"}
    with pytest.raises(KeyError) as python:
        python_position_moves(rules, ["AS"], piles)
    with pytest.raises(KeyError) as native:
        position_moves(rules, ["AS"], piles)
    assert native.value.args == python.value.args == ("SW",)


def test_the_module_refuses_what_is_not_its_arguments() -> None:
    from games.engine import _native

    side_cards, corner_cards = _space_cards(make_rules("classic"))
    piles: dict[str, list[str]] = {name: [] for name in PILES}
    with pytest.raises(TypeError):
        _native.position_moves(["AS"], piles, side_cards, corner_cards)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _native.position_moves(["AS"], piles, "all", corner_cards, False)  # type: ignore[arg-type]
    with pytest.raises(OverflowError):
        _native.position_moves(["AS"], piles, -1, corner_cards, False)
    with pytest.raises(TypeError):
        _native.bind(PLAY_OF_CODE[:-1], PILE_MOVE_OF_CODE, PILES)
    with pytest.raises(TypeError):
        _native.bind(PLAY_OF_CODE, PILE_MOVE_OF_CODE, (*PILES[:-1], 8))  # type: ignore[arg-type]
    # A refused bind keeps the moves it was given.
    assert _same(make_rules("classic"), ["AS"], {**piles, "N": ["2H"]})[0] == Play("AS", "N")
    assert _native.cards() == CARDS


def test_the_c_shuffle_deals_every_vector(vectors: dict[str, Any]) -> None:
    for vector in vectors["shuffle"]:
        seed = bytes.fromhex(vector["seed"])
        assert shuffle(seed) == python_shuffle(seed) == vector["deck"]
    for vector in vectors["hand_seed"]:
        seed = hand_seed(bytes.fromhex(vector["game_seed"]), vector["hand"])
        assert shuffle(seed) == python_shuffle(seed) == vector["deck"]


@pytest.mark.parametrize("length", [0, 1, 31, 32, 47, 55, 56, 57, 63, 64, 65, 119, 120, 200])
def test_the_c_shuffle_deals_the_python_deck_from_seeds_of_any_length(length: int, sha_blocks: str) -> None:
    # SHA-256 pads a message into one block up to 55 bytes, two from 56: a seed and the block's 8-byte number
    # reach both, and several blocks.
    rng = random.Random(f"native shuffle {length}")
    for _ in range(200):
        seed = rng.randbytes(length)
        deck = shuffle(seed)
        assert deck == python_shuffle(seed)
        # The very strings of cards.DECK, in a new list each time.
        assert sorted(map(id, deck)) == sorted(map(id, DECK)) and deck is not shuffle(seed)


def test_the_c_shuffle_declines_what_is_not_plain_bytes_and_refuses_what_is_not_a_deck() -> None:
    from games.engine import _native

    seed = bytearray(b"kingscorner")
    assert _native.shuffle(seed, DECK) is None  # type: ignore[arg-type]
    assert _native.shuffle("seed", DECK) is None  # type: ignore[arg-type]
    # deal.py shuffles it itself, as the compiled Python takes a bytearray for bytes.
    assert shuffle(seed) == python_shuffle(seed) == python_shuffle(bytes(seed))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _native.shuffle(bytes(32), DECK[:-1])
    with pytest.raises(TypeError):
        _native.shuffle(bytes(32))  # type: ignore[call-arg]
