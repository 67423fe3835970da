"""Analysis of a position without a game (games/apis/analysis.py): the legal moves and the best turn, and
the positions it refuses."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import Game
from tests.support.problems import assert_problem


@pytest.mark.django_db
def test_analysis_gives_legal_moves_and_the_best_turn_without_a_token() -> None:
    body = {"rules": "classic", "hand": ["KS", "5c", "10♦"], "piles": {"N": ["6H"], "E": ["JC"]}, "stock": 20}
    response = APIClient().post("/api/v1/analysis", body, format="json")
    assert response.status_code == 200, response.content
    result = response.json()
    assert {"type": "play", "card": "5C", "to": "N"} in result["legal_moves"]
    assert {"type": "play", "card": "KS", "to": "NE"} in result["legal_moves"]
    assert result["legal_moves"][-1] == {"type": "end_turn"}
    played = {move.get("card") for move in result["best_turn"]}
    assert {"KS", "5C", "TD"} <= played
    assert not Game.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"hand": ["QX"]}, "invalid_card"),
        # Anything in a card list that is not a card's code is invalid_card, as a move's `card` is.
        ({"hand": [5]}, "invalid_card"),
        ({"hand": [True]}, "invalid_card"),
        ({"hand": [None]}, "invalid_card"),
        ({"hand": [["QD"]]}, "invalid_card"),
        ({"hand": ["QD"], "piles": {"N": [{"card": "5C"}]}}, "invalid_card"),
        ({"hand": ["QD"], "piles": {"MIDDLE": []}}, "invalid_request"),
        ({"hand": ["QD"], "rules": {"wild": True}}, "unknown_rule_option"),
        ({"hand": ["QD"], "stock": 53}, "invalid_request"),
        ({"hand": ["QD"], "stock": "5"}, "invalid_request"),
        ({"hand": ["QD"], "piles": {"N": "5C"}}, "invalid_request"),
        ({"hand": "QD"}, "invalid_request"),
        ({"piles": {}}, "invalid_request"),
    ],
)
def test_analysis_of_a_malformed_position_is_a_400(body: dict[str, Any], code: str) -> None:
    assert_problem(APIClient().post("/api/v1/analysis", body, format="json"), 400, code)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"hand": ["QD"], "piles": {"N": ["QD"]}}, "duplicate_card"),
        ({"hand": ["QD", "qd"]}, "duplicate_card"),
        ({"hand": ["QD", "KS"], "piles": {"N": ["5C"]}, "stock": 50}, "too_many_cards"),
        ({"hand": ["QD"], "piles": {"N": ["2H", "9S"]}}, "pile_out_of_sequence"),
        ({"hand": ["QD"], "piles": {"N": ["9H", "8H"]}}, "pile_out_of_sequence"),
        ({"hand": ["QD"], "piles": {"NE": ["QH"]}}, "corner_without_king"),
        ({"hand": ["QD"], "piles": {"W": ["KH", "QS"]}}, "side_pile_starts_with_king"),
    ],
)
def test_analysis_of_a_position_no_game_can_reach_is_a_422_naming_the_fault(
    body: dict[str, Any], code: str
) -> None:
    assert_problem(APIClient().post("/api/v1/analysis", body, format="json"), 422, code)


@pytest.mark.django_db
def test_analysis_takes_corners_and_sides_as_the_rules_allow_them() -> None:
    body = {"rules": "any_space", "hand": ["QD"], "piles": {"NE": ["QH"], "W": ["KH", "QS"]}}
    assert APIClient().post("/api/v1/analysis", body, format="json").status_code == 200


@pytest.mark.django_db
def test_analysis_takes_a_whole_deck_between_hand_table_and_stock() -> None:
    body = {"hand": ["QD", "KS"], "piles": {"N": ["5C"]}, "stock": 49}
    assert APIClient().post("/api/v1/analysis", body, format="json").status_code == 200
