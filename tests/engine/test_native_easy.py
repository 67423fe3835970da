"""Easy's turn in C (games/engine/_native.c's easy_turn, through players/turns.py) is exactly the turn that
levels.decide() makes of the seat's observation and the turn's seeded stream: the same shared move objects
in the same order on every position of many hands under every rule set, on random tables, and with either
of the C's SHA-256 block functions; what is not plain data, not a card or out of the stream's range is
declined, for the Python to play or refuse. Built beside the compiled engine; the pure-Python build never
loads it (these tests skip there, and in CI the compiled run fails if it is missing); how it is loaded is
tested in test_native_loading.py."""

import hashlib
import os
import random
from typing import Any

import pytest

from games.engine import BUILD, PLAYING, State, make_rules, new_game, observe
from games.engine.moves import END_TURN, PILES
from games.engine.players import play_turn, turns
from games.engine.players.levels import computer_turn, decide, turn_stream
from games.engine.rules import Rules
from tests.support.players import every_rules, random_table, rules_id


@pytest.fixture(autouse=True)
def _native_built() -> None:
    if turns.NATIVE_EASY_TURN is not None:
        return
    if BUILD == "mypyc" and os.environ.get("CI"):
        pytest.fail("the engine is compiled but its C easy turn (_native) was not built")
    pytest.skip(f"the C easy turn is not built here (the engine's build: {BUILD})")


def _python_turn(state: State, game_seed: bytes) -> list[Any]:
    seat = state.current_seat
    stream = turn_stream(game_seed, state.hand_number, seat, state.turn)
    return decide(observe(state, seat), "easy", stream).moves


def _native_turn(state: State, game_seed: bytes) -> list[Any]:
    decision = turns.easy_native(state, state.current_seat, game_seed)
    assert decision is not None
    return decision.moves


def _same(state: State, game_seed: bytes) -> list[Any]:
    native, python = _native_turn(state, game_seed), _python_turn(state, game_seed)
    assert native == python
    # The very move objects the engine shares, not equal copies.
    assert all(ours is theirs for ours, theirs in zip(native, python, strict=True))
    return native


@pytest.mark.parametrize("rules", every_rules(), ids=rules_id)
def test_the_c_turn_is_the_python_turn_on_every_position_of_real_play(rules: Rules, sha_blocks: str) -> None:
    rng = random.Random(f"native easy {rules.preset} {rules.king_pile_to_corner}")
    positions = pile_moves = 0
    for index in range(40):  # some 700 positions
        game_seed = hashlib.sha256(f"native easy {index}".encode()).digest()
        state, _ = new_game(rules=rules, players=2 + index % 3, seed=game_seed, target_score=None)
        while state.status == PLAYING:
            moves = _same(state, game_seed)
            positions += 1
            pile_moves += sum(move.to_json()["type"] == "move_pile" for move in moves)
            # The hand goes on among easy and normal players alike.
            state, _ = play_turn(state, rng.choice(["easy", "normal"]), game_seed)
    assert positions > 500 and pile_moves > 0


@pytest.mark.parametrize("rules", every_rules(), ids=rules_id)
def test_the_c_turn_is_the_python_turn_on_random_tables(rules: Rules) -> None:
    rng = random.Random(f"native easy tables {rules.preset} {rules.king_pile_to_corner}")
    for _ in range(400):
        hand, piles = random_table(rng)
        if not hand:
            continue
        state, _ = new_game(rules=rules, players=3, seed=rng.randbytes(32), target_score=None)
        state.hands[state.current_seat] = hand
        state.piles = piles
        state.hand_number = rng.choice([0, 1, 7, 2**32 - 1])
        state.turn = rng.choice([0, 1, 300, 2**32 - 1])
        _same(state, rng.randbytes(rng.choice([0, 16, 32, 64])))


def test_a_turn_ends_with_end_turn_unless_its_last_play_empties_the_hand() -> None:
    rules = make_rules("classic")
    # 2S fits on N alone, and no pile can move.
    tops = ["3H", "5C", "7D", "9H", "KC", "KD", "KH", "KS"]
    piles = {name: [top] for name, top in zip(PILES, tops, strict=True)}
    state, _ = new_game(rules=rules, players=2, seed=bytes(32), target_score=None)
    state.piles = piles
    seat = state.current_seat
    outs = holds = 0
    for turn in range(200):
        state.turn = turn
        state.hands[seat] = ["2S"]
        moves = _same(state, bytes(32))
        if moves and moves[-1] is END_TURN:
            holds += 1
        else:
            assert [move.to_json() for move in moves] == [{"type": "play", "card": "2S", "to": "N"}]
            outs += 1
    # Easy stops before a move one time in three.
    assert outs > 100 and holds > 40


class _Hand(list[str]):
    pass


class _Piles(dict[str, list[str]]):
    pass


def _declined(state: State, game_seed: Any = bytes(32)) -> None:
    assert turns.easy_native(state, state.current_seat, game_seed) is None


def test_what_is_not_plain_data_or_in_the_streams_range_is_declined_for_the_python() -> None:
    state, _ = new_game(rules=make_rules("classic"), players=4, seed=bytes(32), target_score=None)
    seat = state.current_seat
    hand, piles = state.hands[seat], state.piles
    state.hands[seat] = _Hand(hand)
    _declined(state)
    state.hands[seat] = hand
    state.piles = _Piles(piles)
    _declined(state)
    state.piles = {**piles, "N": tuple(piles["N"])}  # type: ignore[dict-item]
    _declined(state)
    state.piles = piles
    _declined(state, bytearray(32))
    for name, value in [("hand_number", -1), ("hand_number", 2**32), ("turn", -1), ("turn", 2**40)]:
        setattr(state, name, value)
        _declined(state)
        state.hand_number = state.turn = 0
    # The Python raises for those as it always has.
    state.hand_number = 2**32
    with pytest.raises(OverflowError):
        computer_turn(state, "easy", bytes(32))


def _refusals(state: State) -> tuple[type[BaseException], type[BaseException]]:
    """What a computer turn raises (the C declining, then decide()), and what decide() alone raises."""
    seat = state.current_seat
    with pytest.raises(Exception) as turn:
        computer_turn(state, "easy", bytes(32))
    with pytest.raises(Exception) as python:
        decide(observe(state, seat), "easy", turn_stream(bytes(32), state.hand_number, seat, state.turn))
    return turn.type, python.type


@pytest.mark.parametrize("bad", ["ZZ", "K", "KSS", "\ud800S", 7, "held twice"], ids=repr)
def test_what_is_not_a_card_or_is_held_twice_is_refused_by_the_python_as_it_always_was(bad: object) -> None:
    state, _ = new_game(rules=make_rules("classic"), players=2, seed=bytes(32), target_score=None)
    seat = state.current_seat
    hand = state.hands[seat]
    state.hands[seat] = [*hand, hand[0] if bad == "held twice" else bad]  # type: ignore[list-item]
    _declined(state)
    raised, refused = _refusals(state)
    assert raised is refused


def test_a_missing_pile_is_declined_and_the_python_raises_its_key_error() -> None:
    state, _ = new_game(rules=make_rules("classic"), players=2, seed=bytes(32), target_score=None)
    del state.piles["SW"]
    _declined(state)
    assert _refusals(state) == (KeyError, KeyError)


def test_the_module_refuses_what_is_not_its_arguments() -> None:
    from games.engine import _native

    with pytest.raises(TypeError):
        _native.easy_turn(bytes(32), 0, 0, 0, [], {})  # type: ignore[call-arg]
    with pytest.raises(OverflowError):
        _native.easy_turn(bytes(32), 0, 0, 0, [], {}, -1, 0, False)
    with pytest.raises(TypeError):
        _native.sha_blocks()  # type: ignore[call-arg]
