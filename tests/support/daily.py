"""The daily deal as the tests drive it: the day they are set on, a movable clock, games played to the end
as a normal computer player would, and ranked submissions recorded without playing."""

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

import pytest
from rest_framework.test import APIClient

from daily import clock, services
from daily.models import Attempt, DailyDeal, Submission
from games.engine import PLAYING, SeededStream, State, observe
from games.engine.players import choose_turn
from games.models import Game, Player
from games.services import game_moves_apply, player_create

TODAY = date(2026, 3, 5)
NOON = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)

# The `make_player` fixture: a new player with the given name (Ada if none), and a client speaking for them.
MakePlayer = Callable[..., tuple[Player, APIClient]]


class Clock:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.current = NOON
        monkeypatch.setattr(clock, "now", lambda: self.current)

    def set(self, moment: datetime) -> None:
        self.current = moment


def play_to_the_end(
    game: Game, client: APIClient | None = None, views: list[Any] | None = None, turns: int | None = None
) -> Game:
    """Plays seat 0 as a 'normal' computer player would until the hand ends, or for `turns` turns: through
    the moves API with `client`, else through the games service. The answers are added to `views`."""
    stream = SeededStream(b"\x00" * 32)
    played = 0
    while True:
        game.refresh_from_db()
        state = State.from_json(game.state)
        if state.status != PLAYING or played == turns:
            return game
        played += 1
        moves = [move.to_json() for move in choose_turn(observe(state, 0), "normal", stream)]
        if client is None:
            view: Any = game_moves_apply(
                game_id=game.id, player=game.player, moves=moves, expected_version=None
            ).view
        else:
            response = client.post(f"/api/v1/games/{game.id}/moves", {"moves": moves}, format="json")
            assert response.status_code == 200, response.content
            view = response.content.decode()
        if views is not None:
            views.append(view)


def bare_player(name: str) -> Player:
    player, _ = player_create(name=name)
    return player


def ranked_submission(
    deal: DailyDeal,
    *,
    name: str,
    result: int,
    turns: int,
    finished_at: datetime,
    player: Player | None = None,
    closed: bool = False,
) -> Submission:
    """A ranked finish recorded through the service, without playing: the attempt's game is a stub row.
    `closed` marks it as closed unfinished at the deadline instead."""
    player = player or bare_player(name)
    game = Game.objects.create(player=player, opponents=[], rules={}, seed="", state={})
    attempt = Attempt.objects.create(player=player, deal=deal, game=game, ranked=True, started_at=finished_at)
    submission = services.submission_record(
        attempt=attempt, result=result, turns=turns, finished_at=finished_at
    )
    if closed:
        Submission.objects.filter(pk=submission.pk).update(closed=True)
        submission.closed = True
    return submission
