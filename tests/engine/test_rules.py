"""Rule options and rule sets: what each one changes, and how a rule choice is refused."""

from collections.abc import Callable
from typing import Any

import pytest

from games.engine import (
    END_TURN,
    FINISHED,
    OPTIONS,
    PLAYING,
    MoveError,
    MovePile,
    Play,
    Rules,
    RulesError,
    State,
    apply,
    legal_moves,
    make_rules,
    step,
)

Position = Callable[..., State]

CLASSIC = {
    "layout_king": "replace",
    "empty_side": "no_king",
    "empty_corner": "king",
    "king_pile_to_corner": False,
    "draw": "one",
    "draw_timing": "start",
    "blocked_scoring": "fewest_exempt",
}


def _refusal_code(state: State, move: Play | MovePile) -> str | None:
    try:
        apply(state, move)
    except MoveError as refusal:
        return refusal.code
    return None


# --- rule sets and overrides --------------------------------------------------------------------------------


def test_classic_is_the_default_with_every_option_at_its_default() -> None:
    assert make_rules() == make_rules("classic") == make_rules({}) == Rules()
    assert make_rules().options() == CLASSIC
    assert make_rules().preset == "classic"
    assert {name: values[0] for name, values in OPTIONS.items()} == CLASSIC


def test_casual_leaves_kings_spaces_empty_allows_any_side_card_moves_king_piles_and_scores_everyone() -> None:
    assert make_rules("casual").options() == {
        **CLASSIC,
        "layout_king": "leave_empty",
        "empty_side": "any",
        "king_pile_to_corner": True,
        "blocked_scoring": "everyone",
    }


def test_any_space_is_classic_with_any_card_in_any_empty_side_or_corner() -> None:
    assert make_rules("any_space").options() == {**CLASSIC, "empty_side": "any", "empty_corner": "any"}


def test_a_single_option_overrides_its_rule_set() -> None:
    rules = make_rules({"preset": "casual", "layout_king": "replace", "draw": "until_playable"})
    assert rules.preset == "casual"
    assert rules.options() == {
        **make_rules("casual").options(),
        "layout_king": "replace",
        "draw": "until_playable",
    }
    assert make_rules({"king_pile_to_corner": True}).king_pile_to_corner is True
    assert make_rules({"preset": "casual", "king_pile_to_corner": False}).king_pile_to_corner is False


@pytest.mark.parametrize("value", ["TRUE", "true", "false", 1, 0, None])
def test_a_boolean_option_takes_json_true_or_false_only(value: object) -> None:
    with pytest.raises(RulesError) as refused:
        make_rules({"king_pile_to_corner": value})
    assert refused.value.code == "invalid_rule_value"


def test_rules_round_trip_through_json() -> None:
    rules = make_rules({"preset": "any_space", "draw_timing": "end"})
    assert Rules.from_json(rules.to_json()) == rules


@pytest.mark.parametrize("preset", ["classic", "casual", "any_space"])
def test_drawing_until_playable_at_the_end_of_the_turn_is_refused_as_incompatible(preset: str) -> None:
    with pytest.raises(RulesError) as refusal:
        make_rules({"preset": preset, "draw": "until_playable", "draw_timing": "end"})
    assert refusal.value.code == "incompatible_rules"


@pytest.mark.parametrize(
    ("spec", "code"),
    [
        ("house", "unknown_rule_set"),
        ({"preset": "Classic"}, "unknown_rule_set"),
        ({"preset": None}, "unknown_rule_set"),
        ({"jokers": True}, "unknown_rule_option"),
        ({"layout_king": "discard"}, "invalid_rule_value"),
        ({"empty_side": True}, "invalid_rule_value"),
        ({"king_pile_to_corner": "yes"}, "invalid_rule_value"),
        ({"king_pile_to_corner": 1}, "invalid_rule_value"),
        ({"draw": "two"}, "invalid_rule_value"),
        ({"draw_timing": "middle"}, "invalid_rule_value"),
        ({"blocked_scoring": "nobody"}, "invalid_rule_value"),
        (["classic"], "invalid_rules"),
        (7, "invalid_rules"),
    ],
)
def test_unknown_rule_sets_options_and_values_are_refused_with_their_code(spec: Any, code: str) -> None:
    with pytest.raises(RulesError) as refusal:
        make_rules(spec)
    assert refusal.value.code == code


# --- what each option changes (layout_king: see test_deal) --------------------------------------------------


def test_king_cannot_fill_empty_side_under_classic_rules(position: Position) -> None:
    state = position(hands=[["KS", "5D"], ["2C"]], piles={"N": ["9C"]})
    assert _refusal_code(state, Play("KS", "W")) == "no_king_on_empty_side"
    assert _refusal_code(state, Play("5D", "W")) is None


def test_any_card_fills_an_empty_side_under_empty_side_any(position: Position) -> None:
    state = position(
        hands=[["KS", "5D"], ["2C"]], piles={"N": ["9C"]}, rules=make_rules({"empty_side": "any"})
    )
    assert apply(state, Play("KS", "W")).piles["W"] == ["KS"]
    assert _refusal_code(state, Play("5D", "W")) is None


def test_only_a_king_opens_an_empty_corner_under_classic_rules(position: Position) -> None:
    state = position(hands=[["KS", "QD"], ["2C"]], piles={"N": ["9C"]})
    assert _refusal_code(state, Play("QD", "NE")) == "corner_needs_king"
    assert apply(state, Play("KS", "NE")).piles["NE"] == ["KS"]


def test_any_card_opens_an_empty_corner_under_empty_corner_any(position: Position) -> None:
    state = position(
        hands=[["KS", "QD"], ["2C"]], piles={"N": ["9C"]}, rules=make_rules({"empty_corner": "any"})
    )
    assert apply(state, Play("QD", "NE")).piles["NE"] == ["QD"]
    assert _refusal_code(state, Play("KS", "NE")) is None


def test_any_space_lets_a_king_start_a_side_and_a_queen_start_a_corner(position: Position) -> None:
    state = position(hands=[["KS", "QD"], ["2C"]], piles={"N": ["9C"]}, rules=make_rules("any_space"))
    assert _refusal_code(state, Play("KS", "W")) is None
    assert _refusal_code(state, Play("QD", "SW")) is None


def test_king_pile_cannot_move_into_an_empty_corner_under_classic_rules(position: Position) -> None:
    state = position(hands=[["2C"], ["2D"]], piles={"N": ["KH", "QS"], "E": ["9C"]})
    assert _refusal_code(state, MovePile("N", "NE")) == "no_pile_into_empty_space"


def test_king_pile_moves_whole_into_an_empty_corner_under_king_pile_to_corner(position: Position) -> None:
    rules = make_rules({"king_pile_to_corner": True})
    state = position(hands=[["2C"], ["2D"]], piles={"N": ["KH", "QS"], "E": ["9C"]}, rules=rules)
    assert {move for move in legal_moves(state) if isinstance(move, MovePile)} == {
        MovePile("N", corner) for corner in ("NE", "SE", "SW", "NW")
    }
    after = apply(state, MovePile("N", "SW"))
    assert (after.piles["SW"], after.piles["N"]) == (["KH", "QS"], [])
    # Only a King-bottomed pile, and only into an empty corner, never an empty side.
    assert _refusal_code(state, MovePile("E", "NE")) == "no_pile_into_empty_space"
    assert _refusal_code(state, MovePile("N", "W")) == "no_pile_into_empty_space"


# Every side is taken and no drawn card but the 9♥ can be played: tops 10♠ 10♣ 5♠ 5♣, corners empty.
_DRAW_TABLE = {"N": ["TS"], "E": ["TC"], "S": ["5S"], "W": ["5C"]}


def test_draw_one_draws_a_single_card_when_the_turn_begins(position: Position) -> None:
    state = position(hands=[["AD"], ["AC"]], piles=_DRAW_TABLE, stock=["2C", "3C", "9H", "4C"])
    after = apply(state, END_TURN)
    assert after.hands[1] == ["AC", "2C"]
    assert after.stock == ["3C", "9H", "4C"]


def test_draw_until_playable_keeps_drawing_until_a_card_can_be_played(position: Position) -> None:
    rules = make_rules({"draw": "until_playable"})
    state = position(hands=[["AD"], ["AC"]], piles=_DRAW_TABLE, stock=["2C", "3C", "9H", "4C"], rules=rules)
    after, events = step(state, END_TURN)
    assert after.hands[1] == ["AC", "2C", "3C", "9H"]
    assert after.stock == ["4C"]
    assert [event["card"] for event in events if event["type"] == "draw"] == ["2C", "3C", "9H"]


def test_draw_until_playable_draws_one_even_when_a_card_can_already_be_played(position: Position) -> None:
    rules = make_rules({"draw": "until_playable"})
    state = position(hands=[["AD"], ["9D"]], piles=_DRAW_TABLE, stock=["2C", "3C"], rules=rules)
    assert apply(state, END_TURN).hands[1] == ["2C", "9D"]


def test_draw_until_playable_stops_when_the_stock_runs_out(position: Position) -> None:
    rules = make_rules({"draw": "until_playable"})
    state = position(hands=[["AD"], ["AC"]], piles=_DRAW_TABLE, stock=["2C", "3C"], rules=rules)
    after = apply(state, END_TURN)
    assert after.hands[1] == ["AC", "2C", "3C"]
    assert after.stock == []


def test_draw_at_the_start_is_made_when_the_next_turn_begins(position: Position) -> None:
    state = position(hands=[["AD"], ["AC"]], piles=_DRAW_TABLE, stock=["2C", "3C"])
    after = apply(state, END_TURN)
    assert after.hands == [["AD"], ["AC", "2C"]]


def test_draw_at_the_end_is_made_when_the_turn_ends_and_not_when_the_next_begins(position: Position) -> None:
    state = position(
        hands=[["AD"], ["AC"]],
        piles=_DRAW_TABLE,
        stock=["2C", "3C"],
        rules=make_rules({"draw_timing": "end"}),
    )
    after = apply(state, END_TURN)
    assert after.hands == [["AD", "2C"], ["AC"]]
    assert after.stock == ["3C"]
    after = apply(after, END_TURN)
    assert after.hands == [["AD", "2C"], ["AC", "3C"]]


def test_no_draw_at_the_end_of_a_turn_in_which_the_player_goes_out(position: Position) -> None:
    state = position(
        hands=[["9D"], ["AC"]],
        piles=_DRAW_TABLE,
        stock=["2C", "3C"],
        rules=make_rules({"draw_timing": "end"}),
    )
    after, events = step(state, Play("9D", "N"))
    assert after.status == FINISHED
    assert after.stock == ["2C", "3C"]
    assert after.hands == [[], ["AC"]]
    assert not any(event["type"] == "draw" for event in events)


def _block(state: State) -> State:
    """Ends turns without playing until the hand is blocked."""
    while state.status == PLAYING:
        state = apply(state, END_TURN)
    return state


def test_blocked_hand_exempts_the_players_holding_fewest_cards_under_fewest_exempt(
    position: Position,
) -> None:
    state = position(hands=[["KC", "2C"], ["3C"], ["4C", "5C"], ["6C"]], piles=_DRAW_TABLE)
    result = _block(state).hand_results[-1]
    assert result["reason"] == "blocked"
    assert result["penalties"] == [11, 0, 2, 0]


def test_blocked_hand_charges_everyone_under_blocked_scoring_everyone(position: Position) -> None:
    rules = make_rules({"blocked_scoring": "everyone"})
    state = position(hands=[["KC", "2C"], ["3C"], ["4C", "5C"], ["6C"]], piles=_DRAW_TABLE, rules=rules)
    result = _block(state).hand_results[-1]
    assert result["reason"] == "blocked"
    assert result["penalties"] == [11, 1, 2, 1]
