"""The turn clock: a person's turn past its deadline played for them by a computer, by its task or the beat
job."""

from typing import Any

from django.db import transaction
from django.utils import timezone

from games.engine import State
from games.engine.players import computer_steps
from games.models import Game, GameSeat
from games.services.writes import _computer_turns, _Log, _person_to_move, _played, _set_state, game_write

# The level at which the clock plays a person's turn that ran out.
TIMED_OUT_LEVEL = "normal"


def turn_time_out(*, game_id: Any, version: int) -> bool:
    """The turn clock: if the game is still at `version` and the person to move is past their deadline, a
    computer at normal plays their turn for them, then the computers after it play, as after any turn; the
    log says so (`turn_timed_out`, then the moves). One versioned write under the game's row lock, as a move
    is: of this and a move the person makes at the same instant exactly one applies, and the other finds the
    game at another version (the move is refused with 409 `version_conflict`; this does nothing). Whether it
    played the turn."""
    with transaction.atomic():
        game = Game.objects.select_for_update().filter(id=game_id).first()
        if (
            game is None
            or game.version != version
            or game.status != Game.Status.PLAYING
            or game.turn_deadline is None
            or game.turn_deadline > timezone.now()
        ):
            return False
        seats = list(GameSeat.objects.filter(game=game).order_by("seat"))
        for row in seats:
            row.game = game
        before = State.from_json(game.state)
        if not _person_to_move(before, seats):
            return False
        seat = before.current_seat
        log = _Log(game)
        log.note([{"type": "turn_timed_out", "seat": seat}])
        timed_out = computer_steps(before, {seat: TIMED_OUT_LEVEL}, bytes.fromhex(before.seed), turns=1)
        state = _computer_turns(game, _played(log, before, timed_out), log, seats)
        _set_state(game, state, log, seats, before=before)
        game_write(game, log, state)
    return True


# How many overdue turns one run of the beat job plays at most; the next run plays the rest.
TURN_CLOCK_BATCH = 200


def turn_clocks_catch_up() -> int:
    """The beat job: plays every turn past its deadline whose task has not (a worker that was down, a task
    lost, a deadline beyond the tasks' horizon), oldest deadline first; how many. Runs that overlap, and the
    tasks, play each turn once: each is a versioned write."""
    overdue = Game.objects.filter(turn_deadline__lte=timezone.now(), status=Game.Status.PLAYING).order_by(
        "turn_deadline"
    )
    return sum(
        turn_time_out(game_id=game_id, version=version)
        for game_id, version in overdue.values_list("id", "version")[:TURN_CLOCK_BATCH]
    )
