"""Whole games through the API: every rule set against every level, a game of several hands, and a check that
no response ever names a card the player may not see, nor the seed before the game is over."""

import importlib
import json
import re
from typing import Any

import pytest
from django.apps import apps

from games import services
from games.engine import DECK, PLAYING, State, make_rules
from games.models import Game, GameEvent, GameHand, GameMove
from tests.support.games import Caller, play_to_the_end

QUOTED_CARD = re.compile(r'"([2-9TJQKA][CDHS])"')
DECK_SET = set(DECK)


@pytest.mark.parametrize("rules", ["classic", "casual", "any_space"])
@pytest.mark.parametrize("level", ["easy", "normal", "sharp"])
def test_a_single_hand_game_is_played_to_the_end(caller: Caller, rules: str, level: str) -> None:
    view = caller.create_game(
        rules=rules, level=level, target_score=None, seed=f"{len(rules) * 7 + len(level):064x}"
    )
    view = play_to_the_end(caller, view)
    assert view["status"] == "finished" and view["winners"]
    result = view["hand_result"]
    assert sum(len(hand) for hand in result["hands"]) + view["table"]["stock"] + sum(
        len(pile) for pile in view["table"]["piles"].values()
    ) == len(DECK)
    assert [p["score"] for p in view["players"]] == result["scores"]


def test_a_game_of_several_hands_is_played_to_its_target(caller: Caller) -> None:
    view = play_to_the_end(caller, caller.create_game(target_score=8, seed="12" * 32, level="sharp"))
    assert view["status"] == "finished" and view["hand_number"] >= 1
    scores = [p["score"] for p in view["players"]]
    assert max(scores) >= 8 and [s for s in range(4) if scores[s] == min(scores)] == view["winners"]
    game = Game.objects.get(id=view["id"])
    assert GameMove.objects.filter(game=game, seat=None).count() == view["hand_number"]


def test_the_log_replays_the_game_from_its_seed(caller: Caller) -> None:
    from games.engine import make_rules, new_game, next_hand, parse_move, step

    view = play_to_the_end(caller, caller.create_game(target_score=8, seed="34" * 32, opponents=2))
    game = Game.objects.get(id=view["id"])
    state = None
    for logged in GameMove.objects.filter(game=game).order_by("seq"):
        if logged.move == {"type": "deal"}:
            if state is None:
                state, _ = new_game(
                    rules=make_rules(game.rules), players=3, seed=bytes.fromhex(game.seed), target_score=8
                )
            else:
                state, _ = next_hand(state)
        else:
            assert state is not None
            state, _ = step(state, parse_move(logged.move), seat=logged.seat)
    assert state is not None and state.to_json() == game.state


def _hidden_check(caller: Caller, path: str, body: Any) -> None:
    """After each response: no card in another seat's hand (while a hand is in play) or in the stock is
    named, and the seed is not shown before the game is over."""
    game = Game.objects.filter(player_id=caller.player_id).order_by("-created_at").first()
    if game is None or body is None:
        return
    state = State.from_json(game.state)
    hidden = set(state.stock)
    if state.status == PLAYING:
        hidden |= {card for seat, hand in enumerate(state.hands) if seat != 0 for card in hand}
    text = json.dumps(body)
    named = set(QUOTED_CARD.findall(text)) & DECK_SET
    assert not named & hidden, f"{path} named hidden cards {sorted(named & hidden)}"
    if game.status != "finished":
        assert game.seed not in text.lower()


@pytest.mark.parametrize("rules", ["classic", "casual"])
def test_no_response_names_a_hidden_card_or_the_seed_early(caller: Caller, rules: str) -> None:
    caller.after_each = _hidden_check
    last_seq = 0
    for seed in ("56" * 32, "78" * 32):
        view = caller.create_game(rules=rules, target_score=6, opponents=3, level="easy", seed=seed)
        for _ in range(500):
            if view["status"] == "finished":
                break
            events = caller.get(f"/api/v1/games/{view['id']}/events?after={last_seq}").json()
            last_seq = events["more_after"]
            caller.get(f"/api/v1/games/{view['id']}")
            if view["status"] == "hand_over":
                view = caller.post(f"/api/v1/games/{view['id']}/hands").json()
                continue
            caller.get(f"/api/v1/games/{view['id']}/hint")
            # One move a request, so that every intermediate position is looked at.
            move = next((m for m in view["legal_moves"] if m["type"] != "end_turn"), {"type": "end_turn"})
            if move["type"] == "play" and len(view["hand"]) % 2:
                move = {"type": "play", "card": move["card"]}
            view = caller.moves(view, [move]).json()
        assert view["status"] == "finished"
        last_seq = 0
    assert len(caller.seen) > 100


def test_each_finished_hand_is_a_row_and_the_state_keeps_only_the_last_hands_result(caller: Caller) -> None:
    """The review's unbounded state: every hand's result was appended to the game's state for ever."""
    view = play_to_the_end(caller, caller.create_game(target_score=40, seed="56" * 32, opponents=1))
    game = Game.objects.get(id=view["id"])
    assert view["hand_number"] > 2
    hand_overs = [
        event.data for event in GameEvent.objects.filter(game=game, type="hand_over").order_by("seq")
    ]
    rows = list(GameHand.objects.filter(game=game).order_by("hand_number").values_list("result", flat=True))
    assert rows == hand_overs and len(rows) == view["hand_number"]
    assert game.state["hand_results"] == rows[-1:]
    assert view["hand_result"] == rows[-1]


@pytest.mark.django_db
def test_the_data_migration_moves_hand_results_out_of_the_state() -> None:
    migration = importlib.import_module("games.migrations.0006_hand_results_to_rows")
    player, _ = services.player_create(name="Ada")
    game = services.game_create(player=player, levels=["easy"], rules=make_rules(), target_score=100)
    results = [{"hand_number": number, "reason": "blocked", "scores": [number, 0]} for number in (1, 2, 3)]
    Game.objects.filter(id=game.id).update(state={**game.state, "hand_results": results})
    migration._hands_to_rows(apps, None)
    migration._hands_to_rows(apps, None)  # run twice, as after an interrupted migration: no duplicate
    game.refresh_from_db()
    assert game.state["hand_results"] == results[-1:]
    assert list(GameHand.objects.filter(game=game).values_list("result", flat=True)) == results
