"""The JSON parser (kingscorner/api/parsers.py): a body nested deeper than 32 levels is a 400
`json_too_deep`, never a 500, wherever the nesting is."""

from tests.support.games import Caller
from tests.support.problems import assert_problem


def test_json_nested_past_the_recursion_limit_is_a_400_not_a_500(caller: Caller) -> None:
    body = "[" * 20_000 + "]" * 20_000
    response = caller.client.post("/api/v1/games", data=body, content_type="application/json")
    assert_problem(response, 400, "json_too_deep")


def test_a_move_nested_past_the_recursion_limit_is_a_400_not_a_500(caller: Caller) -> None:
    # The review's 500: about 933 levels inside a move passed the parser and failed in DRF's JSONField.
    view = caller.create_game()
    card = "[" * 1_000 + "]" * 1_000
    body = '{"moves": [{"type": "play", "card": ' + card + ', "to": "N"}]}'
    response = caller.client.post(
        f"/api/v1/games/{view['id']}/moves", data=body, content_type="application/json"
    )
    assert_problem(response, 400, "json_too_deep")


def test_json_nested_32_deep_is_read_and_33_deep_is_refused(caller: Caller) -> None:
    def nested(depth: int) -> str:
        # The body is one level; `rules` holds the rest.
        return '{"rules": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"

    assert (
        caller.client.post("/api/v1/games", data=nested(32), content_type="application/json").json()["code"]
        == "invalid_rules"
    )
    response = caller.client.post("/api/v1/games", data=nested(33), content_type="application/json")
    assert_problem(response, 400, "json_too_deep")
