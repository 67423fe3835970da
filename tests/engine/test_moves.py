"""Moves' canonical JSON forms and how move JSON is read or refused."""

import json
from typing import Any

import pytest

from games.engine import END_TURN, EndTurn, Move, MoveError, MovePile, Play, parse_move


@pytest.mark.parametrize(
    ("move", "data"),
    [
        (Play("QD", "NE"), {"type": "play", "card": "QD", "to": "NE"}),
        (MovePile("W", "S"), {"type": "move_pile", "from": "W", "to": "S"}),
        (END_TURN, {"type": "end_turn"}),
    ],
)
def test_each_move_has_one_canonical_json_form_that_reads_back_as_the_same_move(
    move: Move, data: dict[str, Any]
) -> None:
    assert move.to_json() == data
    assert parse_move(json.loads(json.dumps(move.to_json()))) == move


def test_parse_move_reads_card_spellings_and_lower_case_piles_into_canonical_form() -> None:
    assert parse_move({"type": "play", "card": "10♦", "to": "ne"}) == Play("TD", "NE")
    assert parse_move({"type": "move_pile", "from": "w", "to": "s"}) == MovePile("W", "S")
    assert isinstance(parse_move({"type": "end_turn"}), EndTurn)


def test_open_play_without_a_pile_is_read_only_when_allowed() -> None:
    move = parse_move({"type": "play", "card": "QD"}, allow_open_play=True)
    assert move == Play("QD", None)
    assert move.to_json() == {"type": "play", "card": "QD"}
    assert parse_move({"type": "play", "card": "QD", "to": None}, allow_open_play=True) == Play("QD", None)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ("end_turn", "invalid_move"),
        (None, "invalid_move"),
        ([{"type": "end_turn"}], "invalid_move"),
        ({}, "invalid_move"),
        ({"type": "pass"}, "invalid_move"),
        ({"type": "PLAY", "card": "QD", "to": "NE"}, "invalid_move"),
        ({"type": "end_turn", "seat": 0}, "invalid_move"),
        ({"type": "play", "card": "QD", "to": "NE", "from": "N"}, "invalid_move"),
        ({"type": "play", "to": "NE"}, "invalid_move"),
        ({"type": "play", "card": "QD"}, "invalid_move"),
        ({"type": "play", "card": "QD", "to": None}, "invalid_move"),
        ({"type": "play", "card": "QX", "to": "NE"}, "invalid_card"),
        ({"type": "play", "card": 12, "to": "NE"}, "invalid_card"),
        ({"type": "play", "card": "QD", "to": "C"}, "unknown_pile"),
        ({"type": "play", "card": "QD", "to": 3}, "unknown_pile"),
        ({"type": "move_pile", "from": "W"}, "unknown_pile"),
        ({"type": "move_pile", "from": "X", "to": "S"}, "unknown_pile"),
        ({"type": "move_pile", "from": "W", "to": "S", "card": "QD"}, "invalid_move"),
    ],
)
def test_parse_move_refuses_malformed_moves_with_a_code(data: Any, code: str) -> None:
    with pytest.raises(MoveError) as refusal:
        parse_move(data)
    assert refusal.value.code == code


def test_pile_names_are_read_in_either_ascii_case_only() -> None:
    assert parse_move({"type": "move_pile", "from": "w", "to": "sE"}) == MovePile("W", "SE")
    with pytest.raises(MoveError) as refusal:
        parse_move({"type": "play", "card": "QD", "to": "ſ"})
    assert refusal.value.code == "unknown_pile"
