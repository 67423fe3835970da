"""How game.py and deal.py take the C legal moves and shuffle (_native.c): only in a compiled build, only
where the module was built, only once it reads the cards in masks.CARDS's order and deals a seed as deal.py
does; and the Python's answer wherever the C declines (None). Compiled, that logic is itself compiled and
reads its module's values from C, so these tests run on the pure-Python modules (KINGSCORNER_ENGINE=python,
as .ci/run runs the engine's tests a second time), where they can be replaced; tests/engine/test_native.py
tests the compiled build's C moves and shuffle themselves."""

import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

import games.engine
from games.engine import BUILD, deal, game, make_rules, new_game, observe
from games.engine.cards import DECK
from games.engine.masks import CARDS
from games.engine.moves import END_TURN, PILE_MOVE_OF_CODE, PILES, PLAY_OF_CODE
from games.engine.players import turns
from games.engine.players.levels import computer_turn, decide, turn_stream
from games.engine.state import State

pytestmark = pytest.mark.skipif(
    BUILD == "mypyc", reason="the compiled build's loading is compiled; test_native.py tests what it loads"
)

MODULE = "games.engine._native"


class _Native(ModuleType):
    """A stand-in for the C module, recording what it is given."""

    def __init__(self, *, cards: tuple[str, ...] = CARDS, deals_as_python: bool = True) -> None:
        super().__init__(MODULE)
        self.bound: tuple[Any, ...] | None = None
        self._cards = cards
        self._deals_as_python = deals_as_python

    def cards(self) -> tuple[str, ...]:
        return self._cards

    def bind(self, *given: Any) -> None:
        self.bound = given

    def position_moves(self, *given: Any) -> list[Any] | None:
        return None

    def shuffle(self, seed: bytes, deck: tuple[str, ...]) -> list[str] | None:
        dealt = deal.python_shuffle(seed)
        return dealt if self._deals_as_python else dealt[::-1]


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """The loaders as a compiled build runs them."""
    monkeypatch.setattr(game, "COMPILED", True)
    monkeypatch.setattr(deal, "COMPILED", True)
    monkeypatch.delattr(games.engine, "_native", raising=False)
    yield monkeypatch


def _with_module(monkeypatch: pytest.MonkeyPatch, module: ModuleType | None) -> None:
    # None in sys.modules makes the import raise ImportError, as where nothing was built.
    monkeypatch.setitem(sys.modules, MODULE, module)


def test_the_pure_build_never_loads_the_c_module() -> None:
    assert game.NATIVE_POSITION_MOVES is None and deal.NATIVE_SHUFFLE is None
    assert game._native_position_moves() is None and deal._native_shuffle() is None
    assert turns.NATIVE_EASY_TURN is None and turns._native_easy_turn() is None


def test_a_compiled_build_takes_the_c_module_where_it_reads_and_deals_as_the_python(
    compiled: pytest.MonkeyPatch,
) -> None:
    native = _Native()
    _with_module(compiled, native)
    assert game._native_position_moves() == native.position_moves
    # It is given the very moves and piles' names game.py shares.
    assert native.bound == (PLAY_OF_CODE, PILE_MOVE_OF_CODE, PILES)
    assert deal._native_shuffle() == native.shuffle


def test_a_c_module_that_reads_or_deals_otherwise_refuses_to_load(compiled: pytest.MonkeyPatch) -> None:
    _with_module(compiled, _Native(cards=tuple(reversed(CARDS))))
    with pytest.raises(ImportError, match="rebuild it"):
        game._native_position_moves()
    _with_module(compiled, _Native(deals_as_python=False))
    with pytest.raises(ImportError, match="rebuild it"):
        deal._native_shuffle()


def test_where_the_c_module_was_not_built_the_python_serves(compiled: pytest.MonkeyPatch) -> None:
    _with_module(compiled, None)
    assert game._native_position_moves() is None and deal._native_shuffle() is None


def test_position_moves_answers_with_the_c_moves_or_lists_them_where_it_declines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = make_rules({"preset": "any_space", "king_pile_to_corner": True})
    hand = ["AS", "KD"]
    piles: dict[str, list[str]] = {name: [] for name in PILES}
    piles["N"] = ["2H"]
    given: list[tuple[Any, ...]] = []
    answer: list[Any] = [END_TURN]

    def native(*arguments: Any) -> list[Any] | None:
        given.append(arguments)
        return answer if len(given) == 1 else None

    monkeypatch.setattr(game, "NATIVE_POSITION_MOVES", native)
    assert game.position_moves(rules, hand, piles) is answer
    assert game.position_moves(rules, hand, piles) == game.python_position_moves(rules, hand, piles)
    side_cards, corner_cards = game._space_cards(rules)
    assert given[0] == (hand, piles, side_cards, corner_cards, True)


def test_shuffle_answers_with_the_c_deck_or_deals_it_where_it_declines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    given: list[tuple[bytes, tuple[str, ...]]] = []

    def native(seed: bytes, deck: tuple[str, ...]) -> list[str] | None:
        given.append((seed, deck))
        return list(deck) if len(given) == 1 else None

    monkeypatch.setattr(deal, "NATIVE_SHUFFLE", native)
    assert deal.shuffle(b"seed") == list(DECK)
    assert deal.shuffle(b"seed") == deal.python_shuffle(b"seed") != list(DECK)
    assert given == [(b"seed", DECK)] * 2


def test_easy_s_c_turn_loads_with_the_bound_c_moves_and_refuses_a_module_without_it(
    compiled: pytest.MonkeyPatch,
) -> None:
    native = _Native()
    _with_module(compiled, native)
    # Not before game.py has loaded and bound the module.
    assert turns._native_easy_turn() is None
    compiled.setattr(game, "NATIVE_POSITION_MOVES", native.position_moves)
    with pytest.raises(ImportError, match="no easy_turn: rebuild it"):
        turns._native_easy_turn()
    compiled.setattr(native, "easy_turn", lambda *given: None, raising=False)
    assert turns._native_easy_turn() == native.easy_turn


def _easy_state() -> State:
    state, _ = new_game(rules=make_rules("any_space"), players=3, seed=bytes(32), target_score=None)
    return state


def test_an_easy_turn_takes_the_c_moves_or_decides_them_where_the_c_declines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = _easy_state()
    seat = state.current_seat
    game_seed = b"seed"
    given: list[tuple[Any, ...]] = []
    play = PLAY_OF_CODE[5]
    answers: list[Any] = [([play], False), ([], True), None]

    def native(*arguments: Any) -> Any:
        given.append(arguments)
        return answers[len(given) - 1]

    monkeypatch.setattr(turns, "NATIVE_EASY_TURN", native)
    # The moves as the C gives them, then END_TURN while the hand holds cards.
    assert computer_turn(state, "easy", game_seed)[0].moves == [play]
    assert computer_turn(state, "easy", game_seed)[0].moves == [END_TURN]
    stream = turn_stream(game_seed, state.hand_number, seat, state.turn)
    assert (
        computer_turn(state, "easy", game_seed)[0].moves == decide(observe(state, seat), "easy", stream).moves
    )
    side_cards, corner_cards = game._space_cards(state.rules)
    assert given[0] == (
        game_seed,
        state.hand_number,
        seat,
        state.turn,
        state.hands[seat],
        state.piles,
        side_cards,
        corner_cards,
        state.rules.king_pile_to_corner,
    )
    # Only easy's turn asks it.
    computer_turn(state, "normal", game_seed)
    assert len(given) == 3
