"""Every reason a move is refused, with its code, and that a refused move changes nothing."""

from collections.abc import Callable

import pytest

from games.engine import (
    END_TURN,
    FINISHED,
    HAND_OVER,
    Move,
    MoveError,
    MovePile,
    Play,
    State,
    apply,
    next_hand,
    step,
)

Position = Callable[..., State]


def _table(position: Position) -> State:
    """Seat 0 to play: 9♣, A♥ and 10♦ on the sides, a K♣ corner, the W side and three corners empty."""
    return position(
        hands=[["QD", "QS", "KS", "5D", "2C"], ["3H", "8D"]],
        piles={"N": ["9C"], "E": ["AH"], "S": ["TD"], "NE": ["KC"]},
        stock=["4C", "6C"],
    )


@pytest.mark.parametrize(
    ("move", "code"),
    [
        (Play("8D", "N"), "card_not_in_hand"),
        (Play("AS", "N"), "card_not_in_hand"),
        (Play("QS", "NE"), "does_not_fit"),
        (Play("5D", "N"), "does_not_fit"),
        (Play("2C", "E"), "nothing_on_ace"),
        (Play("QD", "SE"), "corner_needs_king"),
        (Play("KS", "W"), "no_king_on_empty_side"),
        (Play("QD", None), "invalid_move"),
        (MovePile("NE", "N"), "corner_pile_cannot_move"),
        (MovePile("W", "N"), "empty_pile"),
        (MovePile("N", "N"), "same_pile"),
        (MovePile("N", "W"), "no_pile_into_empty_space"),
        (MovePile("N", "SE"), "no_pile_into_empty_space"),
        (MovePile("S", "E"), "nothing_on_ace"),
        (MovePile("S", "N"), "does_not_fit"),
    ],
)
def test_refused_move_names_its_reason_and_leaves_the_state_unchanged(
    position: Position, move: Move, code: str
) -> None:
    state = _table(position)
    before = state.to_json()
    with pytest.raises(MoveError) as refusal:
        step(state, move)
    assert refusal.value.code == code
    assert refusal.value.detail
    assert state.to_json() == before


@pytest.mark.parametrize("move", [Play("QD", "NE"), MovePile("N", "S"), END_TURN])
def test_move_by_a_seat_whose_turn_it_is_not_is_refused_with_not_your_turn(
    position: Position, move: Move
) -> None:
    state = _table(position)
    before = state.to_json()
    with pytest.raises(MoveError) as refusal:
        step(state, move, seat=1)
    assert refusal.value.code == "not_your_turn"
    assert state.to_json() == before
    assert step(state, move, seat=0)[0].to_json() != before


def test_moves_after_the_hand_ends_are_refused_with_hand_over(position: Position) -> None:
    state = position(hands=[["QD"], ["3H"]], piles={"N": ["KC"]}, target_score=25)
    state = apply(state, Play("QD", "N"))
    assert state.status == HAND_OVER
    before = state.to_json()
    for move in (Play("3H", "N"), END_TURN):
        with pytest.raises(MoveError) as refusal:
            step(state, move)
        assert refusal.value.code == "hand_over"
    assert state.to_json() == before


def test_moves_and_deals_after_the_game_ends_are_refused_with_game_over(position: Position) -> None:
    state = apply(position(hands=[["QD"], ["3H"]], piles={"N": ["KC"]}), Play("QD", "N"))
    assert state.status == FINISHED
    before = state.to_json()
    with pytest.raises(MoveError) as refusal:
        step(state, END_TURN)
    assert refusal.value.code == "game_over"
    with pytest.raises(MoveError) as refusal:
        next_hand(state)
    assert refusal.value.code == "game_over"
    assert state.to_json() == before


def test_next_hand_while_the_hand_is_in_play_is_refused_with_hand_in_progress(position: Position) -> None:
    state = _table(position)
    before = state.to_json()
    with pytest.raises(MoveError) as refusal:
        next_hand(state)
    assert refusal.value.code == "hand_in_progress"
    assert state.to_json() == before


def test_a_move_built_in_code_with_an_unknown_pile_is_refused_with_unknown_pile() -> None:
    from games.engine import MoveError, MovePile, Play, make_rules, new_game, step

    state, _ = new_game(rules=make_rules(), players=2, seed=bytes(32), target_score=None)
    card = state.hands[state.current_seat][0]
    for move in (Play(card, "X"), MovePile("N", "middle"), MovePile("up", "S")):
        try:
            step(state, move)
        except MoveError as error:
            assert error.code == "unknown_pile"
        else:
            raise AssertionError(f"{move} was accepted")
