"""The computer turns a request plays: sharp is given the hand's public events as its seat saw them, the
other levels no history, and nobody is shown a card their seat may not see."""

from typing import Any

import pytest

from games.engine import Observation, make_rules, observe_event, stored_event
from games.engine.players import levels
from games.models import GameEvent
from games.services import game_create, game_moves_apply, player_create


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str, Any]]:
    """Each computer turn the services play: the seat, its level and the history it was given."""
    recorded: list[tuple[int, str, Any]] = []
    decide = levels.decide

    def recording(observation: Observation, level: str, stream: Any, **options: Any) -> Any:
        history = options.get("history")
        recorded.append((observation["seat"], level, None if history is None else list(history)))
        return decide(observation, level, stream, **options)

    monkeypatch.setattr(levels, "decide", recording)
    return recorded


@pytest.mark.django_db
def test_sharp_is_given_the_hands_public_events_as_its_seat_saw_them_and_normal_none(
    calls: list[tuple[int, str, Any]],
) -> None:
    player, _ = player_create(name="Ada")
    game = game_create(
        player=player,
        levels=["sharp", "normal", "sharp"],
        rules=make_rules("classic"),
        target_score=None,
        seed=bytes.fromhex("cd" * 32),
    )
    for _ in range(3):
        game.refresh_from_db()
        if game.status != "playing":
            break
        game_moves_apply(game_id=game.id, player=player, moves=[{"type": "end_turn"}], expected_version=None)
    events = [
        stored_event(kind, data)
        for kind, data in GameEvent.objects.filter(game=game).values_list("type", "data")
    ]
    assert [event["type"] for event in events][:1] == ["deal"]
    sharp_turns = [(seat, history) for seat, level, history in calls if level == "sharp"]
    assert sharp_turns and all(history is None for _, level, history in calls if level == "normal")
    for seat, history in sharp_turns:
        seen = [observe_event(event, seat) for event in events]
        # The history is the hand so far as the seat saw it, up to its own turn's start.
        assert history == seen[: len(history)]
        assert history[-1]["type"] in ("turn_start", "draw")
        assert events[len(history)].get("seat") == seat
        hidden_draws = [e for e in history if e["type"] == "draw" and e["seat"] != seat]
        assert hidden_draws and all("card" not in event for event in hidden_draws)
