"""The browser tests' check that no page held another person's cards can fail: given what a seat held in
each hand, it lets a page's own cards, the table and a finished hand's result through, and names another
seat's card in a hand, a legal move, a hint or a draw, a list of hands outside a result, and the stock."""

from typing import Any

from tests.support.web_pages import Received, Truth, foreign_cards, game_truth

GAME = "4c993eaf-1c1b-4b9e-9d55-3a3b6f1e2a7d"
URL = f"http://127.0.0.1:8000/api/v1/games/{GAME}"
LOG: list[dict[str, Any]] = [
    {"seq": 1, "version": 1, "type": "deal", "hand_number": 1, "dealer": 1, "piles": {}, "stock": 30},
    {"seq": 2, "version": 1, "type": "draw", "seat": 0, "card": "5H", "stock": 29},
    {"seq": 3, "version": 2, "type": "play", "seat": 0, "card": "5H", "to": "N"},
    {"seq": 4, "version": 3, "type": "play", "seat": 1, "card": "QD", "to": "E"},
    {
        "seq": 5,
        "version": 3,
        "type": "hand_over",
        "hand_number": 1,
        "reason": "out",
        "out_seat": 1,
        "hands": [["2C", "3S"], []],
        "penalties": [5, 0],
        "scores": [5, 0],
        "turns_taken": [1, 1],
    },
]


def _truth() -> Truth:
    return game_truth(LOG, None, GAME)


def _view(**members: Any) -> dict[str, Any]:
    view = {
        "id": GAME,
        "version": 2,
        "status": "playing",
        "hand_number": 1,
        "your_seat": 0,
        "hand": ["2C", "3S"],
        "legal_moves": [{"type": "play", "card": "2C", "to": "N"}, {"type": "end_turn"}],
        "events": [LOG[1]],
        "table": {"stock": 29, "piles": {"N": ["6S", "5H"], "E": ["KS", "QD"]}},
        "hand_result": None,
        "seed": None,
    }
    return {**view, **members}


def _found(*received: Received) -> list[str]:
    return foreign_cards(list(received), {GAME: 0}, {GAME: _truth()})


def test_a_page_with_its_own_cards_the_table_and_a_finished_hand_passes() -> None:
    over = _view(
        status="hand_over", hand_result={key: LOG[4][key] for key in ("hands", "reason", "penalties")}
    )
    assert _found(Received(URL, _view()), Received(URL, over), Received(URL, LOG[4], event="hand_over")) == []


def test_another_seats_card_in_the_hand_a_move_or_a_hint_is_found() -> None:
    assert len(_found(Received(URL, _view(hand=["2C", "QD"])))) == 1
    legal = [{"type": "play", "card": "QD", "to": "N"}]
    assert len(_found(Received(URL, _view(legal_moves=legal)))) == 1
    assert len(_found(Received(f"{URL}/hint", {"version": 2, "moves": legal}))) == 1
    # In a version conflict's `current`, as in any answer that holds a game.
    assert (
        len(_found(Received(f"{URL}/moves", {"code": "version_conflict", "current": _view(hand=["QD"])})))
        == 1
    )


def test_another_seats_draw_with_its_card_is_found_in_a_stream_and_in_events() -> None:
    draw = {"seq": 4, "version": 3, "type": "draw", "seat": 1, "card": "QD", "stock": 28}
    assert len(_found(Received(f"{URL}/stream?ticket=t", draw, event="draw"))) == 1
    assert len(_found(Received(f"{URL}/events?after=0", {"items": [draw], "next": None}))) == 1
    seen = {key: value for key, value in draw.items() if key != "card"}
    assert _found(Received(f"{URL}/stream?ticket=t", seen, event="draw")) == []


def test_hands_outside_a_result_the_stock_and_a_seed_in_play_are_found() -> None:
    assert len(_found(Received(URL, {"hands": [["QD"], ["2C"]]}))) == 1
    assert len(_found(Received(URL, _view(table={"stock": ["9C", "TD"], "piles": {}})))) == 1
    assert len(_found(Received(URL, _view(seed="ab" * 32)))) == 1
