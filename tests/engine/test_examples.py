"""The worked examples of the seed documents, move by move."""

from collections.abc import Callable

import pytest

from games.engine import END_TURN, PLAYING, MoveError, MovePile, Play, State, apply, legal_moves

Position = Callable[..., State]


def test_seven_card_turn_of_the_complete_guide(position: Position) -> None:
    # seeds/000: 9♠ above, 4♦ right, J♥ below, 10♣ left, K♣ in the top-right corner; the hand after drawing.
    state = position(
        hands=[["QD", "8H", "3C", "TD", "7C", "5H", "KS", "6S"], ["2C", "2D"]],
        piles={"N": ["9S"], "E": ["4D"], "S": ["JH"], "W": ["TC"], "NE": ["KC"]},
        stock=["AC"],
    )
    state = apply(state, Play("QD", "NE"))
    state = apply(state, Play("8H", "N"))
    state = apply(state, Play("3C", "E"))
    state = apply(state, MovePile("W", "S"))
    assert state.piles["S"] == ["JH", "TC"]
    assert state.piles["W"] == []
    kings_moves = {move for move in legal_moves(state) if isinstance(move, Play) and move.card == "KS"}
    assert kings_moves == {Play("KS", "SE"), Play("KS", "SW"), Play("KS", "NW")}
    state = apply(state, Play("KS", "SE"))
    state = apply(state, Play("7C", "N"))
    with pytest.raises(MoveError) as refusal:
        apply(state, Play("6S", "N"))
    assert refusal.value.code == "does_not_fit"
    state = apply(state, Play("6S", "W"))
    state = apply(state, Play("5H", "W"))
    assert state.hands[0] == ["TD"]
    assert state.played_this_turn == 7
    assert state.piles == {
        "N": ["9S", "8H", "7C"],
        "E": ["4D", "3C"],
        "S": ["JH", "TC"],
        "W": ["6S", "5H"],
        "NE": ["KC", "QD"],
        "SE": ["KS"],
        "SW": [],
        "NW": [],
    }
    assert (state.status, state.current_seat) == (PLAYING, 0)


def test_pile_move_example_of_the_complete_guide_opens_a_space_for_a_lonely_jack(position: Position) -> None:
    # seeds/000: the bottom pile 8♦ 7♠ slides onto the left pile's 9♣; the Jack then starts the bottom pile.
    state = position(
        hands=[["JD"], ["2C", "2D"]],
        piles={"N": ["2H"], "E": ["5C"], "S": ["8D", "7S"], "W": ["9C"]},
        stock=["AC"],
    )
    assert not any(isinstance(move, Play) for move in legal_moves(state))
    assert MovePile("S", "W") in legal_moves(state)
    state = apply(state, MovePile("S", "W"))
    assert state.piles["W"] == ["9C", "8D", "7S"]
    assert state.piles["S"] == []
    state = apply(state, Play("JD", "S"))
    assert state.piles["S"] == ["JD"]


def test_three_card_turn_of_the_kings_in_the_corner_rules(position: Position) -> None:
    # seeds/002: crosses black ten, red four, black six, red jack; the hand a red nine, a black three, a King.
    state = position(
        hands=[["9H", "3S", "KD", "AC"], ["2C", "2D"]],
        piles={"N": ["TC"], "E": ["4H"], "S": ["6S"], "W": ["JD"]},
        stock=["AD"],
    )
    state = apply(state, Play("9H", "N"))
    state = apply(state, Play("3S", "E"))
    state = apply(state, Play("KD", "NE"))
    assert state.hands[0] == ["AC"]
    assert state.piles["NE"] == ["KD"]
    # The corner is now somewhere to build: a black Queen goes on the King.
    state.hands[0].append("QS")
    assert Play("QS", "NE") in legal_moves(state)


def test_north_run_from_eight_to_red_five_cannot_move_onto_a_black_six(position: Position) -> None:
    # seeds/004 claims this move is legal; it is not: the moving pile's bottom card, an 8, must fit on the 6.
    state = position(
        hands=[["2C"], ["2D"]],
        piles={"N": ["8C", "7D", "6C", "5H"], "E": ["QD"], "S": ["JH"], "W": ["6S"]},
        stock=["AC"],
    )
    before = state.to_json()
    with pytest.raises(MoveError) as refusal:
        apply(state, MovePile("N", "W"))
    assert refusal.value.code == "does_not_fit"
    assert state.to_json() == before
    assert MovePile("N", "W") not in legal_moves(state)
    assert legal_moves(state) == [END_TURN]
