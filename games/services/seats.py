"""The writes that hand a person's seat on: the person leaving it, and another person at the table handing an
absent person's seat to a computer (the abandonment rule of a table without a clock). When the creator goes,
the creator's role passes to the next seated person; a waiting table left by its last person closes. Each
locks the game row, as the other table writes do (tables._locked_table)."""

import logging
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from games import hooks
from games.engine import State, check_turn
from games.errors import (
    GameNotStarted,
    SeatIsYours,
    SeatNotAbandoned,
    SeatNotAPerson,
    SeatNotFound,
    TableHasClock,
)
from games.models import Game, GameSeat, Player
from games.selectors import Seated, game_view_of, replaceable_at
from games.services.person_feed import PersonNotice
from games.services.tables import _computer_name, _locked_table, _save_seating
from games.services.writes import GameChange, _computer_turns, _Log, _set_state, game_write

logger = logging.getLogger(__name__)

# The level of the computer that takes a seat its person left, or that was replaced.
LEAVE_LEVEL = "normal"


def _to_computer(game: Game, row: GameSeat, seats: list[GameSeat]) -> None:
    """A computer at LEAVE_LEVEL takes the person's seat, with the first computer name not at the table."""
    taken = {other.name for other in seats if other.kind == GameSeat.Kind.COMPUTER}
    row.kind = GameSeat.Kind.COMPUTER
    row.level = LEAVE_LEVEL
    row.player = None
    row.name = _computer_name(row.seat, taken)
    row.joined_at = timezone.now()
    row.save(update_fields=["kind", "level", "player", "name", "joined_at"])
    _save_seating(game, seats)


def _creator_passes(game: Game, seats: list[GameSeat], seat: int) -> bool:
    """The creator's seat was given up: the role passes to the next person seated after it, in seat order
    round the table. Whether anyone took it (nobody: no person is seated any more)."""
    heir = next((row.player_id for row in [*seats[seat + 1 :], *seats[:seat]] if row.player_id), None)
    if heir is None:
        return False
    game.player_id = heir
    Game.objects.filter(pk=game.pk).update(player=heir)
    return True


def _table_closes(game: Game) -> None:
    """A waiting table that no person holds a seat at any more closes: it is over (`finished`, nothing dealt)
    and its invitation is revoked. Nobody is seated, so it is a 404 `game_not_found` for everyone, and a join
    with its link a 404 `invitation_not_found`."""
    now = timezone.now()
    game.status = Game.Status.FINISHED
    game.finished_at = now
    Game.objects.filter(pk=game.pk, invitation_revoked_at__isnull=True).update(invitation_revoked_at=now)


def _played_on(game: Game, seats: list[GameSeat], log: _Log, notices: Sequence[PersonNotice] = ()) -> State:
    """A game in play after a seat changed hands: when the computer now in it is to move, it plays the turn,
    and the computers after it theirs, up to a person's turn; saved with the log (and `notices`)."""
    before = State.from_json(game.state)
    state = _computer_turns(game, before, log, seats)
    _set_state(game, state, log, seats, before=before)
    game_write(game, log, state, notices=notices)
    return state


def seat_leave(*, game_id: Any, player: Player) -> None:
    """The player leaves the table. At a table in play (or over) a computer at `normal` takes the seat and
    the game goes on: when it was the seat's turn, the computer plays it now (and any computers after it).
    At a waiting table the seat is free again for the invitation, except the creator's, which a computer
    takes. The creator's role passes to the next seated person; a waiting table with nobody left closes
    (_table_closes). The log says who left and who took the seat."""
    with transaction.atomic():
        table = _locked_table(game_id=game_id, player=player)
        game, seats = table.game, table.seats
        # A ranked daily attempt is played to its end by its player (daily refuses the leave).
        hooks.check_leave_allowed(game)
        row = seats[table.seat]
        name = row.name
        creator = game.player_id == player.pk
        waiting = game.status == Game.Status.WAITING
        log = _Log(game)
        if waiting and not creator:
            row.player = None
            row.name = ""
            row.joined_at = None
            row.save(update_fields=["player", "name", "joined_at"])
            _save_seating(game, seats)
            log.note([{"type": "seat_left", "seat": row.seat, "name": name, "level": None}])
            game_write(game, log)
            return
        _to_computer(game, row, seats)
        log.note(
            [
                {
                    "type": "seat_left",
                    "seat": row.seat,
                    "name": name,
                    "level": LEAVE_LEVEL,
                    "computer": row.name,
                }
            ]
        )
        if creator and not _creator_passes(game, seats, row.seat) and waiting:
            _table_closes(game)
        if waiting:
            game_write(game, log)
            return
        _played_on(game, seats, log)


def _check_replaceable(table: Seated, seat: int) -> None:
    """Refuses to replace `seat` unless its person is to move at a table without a clock and has been for the
    table's `abandon_seconds` (games.selectors.replaceable_at), and it is someone else's seat."""
    game, seats = table.game, table.seats
    if not 0 <= seat < len(seats):
        raise SeatNotFound(seat=seat, seats=len(seats))
    if seat == table.seat:
        raise SeatIsYours()
    if game.turn_seconds is not None:
        raise TableHasClock()
    if game.status == Game.Status.WAITING:
        raise GameNotStarted()
    state = State.from_json(game.state)
    # A game or hand that is over is refused as a move is (game_over, hand_over).
    to_move = check_turn(state)
    if seats[seat].player_id is None:
        raise SeatNotAPerson(seat)
    now = timezone.now()
    at = replaceable_at(game, seats)
    if to_move != seat:
        raise SeatNotAbandoned(seat=seat, replaceable_at=None, now=now)
    if at is None or now < at:
        raise SeatNotAbandoned(seat=seat, replaceable_at=at, now=now)


def seat_replace(*, game_id: Any, player: Player, seat: int) -> GameChange:
    """A person at the table hands the seat of a person who has been to move for the table's
    `abandon_seconds` to a computer at `normal`, which plays the turn at once, and the computers after it
    theirs, up to the next person's turn. The replaced person is seated no more (their game is a 404, as
    after a leave) and is told (_seat_replaced_notice); when they were the creator, the role passes on. The
    log says so (`seat_replaced`). Under the game's row lock: of this and the absent person's move, leave or
    another replace, exactly one applies. The view is the caller's."""
    with transaction.atomic():
        table = _locked_table(game_id=game_id, player=player)
        _check_replaceable(table, seat)
        game, seats = table.game, table.seats
        row = seats[seat]
        absent, name = row.player_id, row.name
        _to_computer(game, row, seats)
        log = _Log(game)
        log.note(
            [
                {
                    "type": "seat_replaced",
                    "seat": seat,
                    "name": name,
                    "level": LEAVE_LEVEL,
                    "computer": row.name,
                    "by": table.seat,
                }
            ]
        )
        if game.player_id == absent:
            _creator_passes(game, seats, seat)
        notice = _seat_replaced_notice(player_id=absent, game=game, seat=seat, computer=row.name)
        state = _played_on(game, seats, log, [notice])
        view = game_view_of(game=game, seats=seats, seat=table.seat, events=log.events, state=state)
    return GameChange(game=game, view=view)


def _seat_replaced_notice(*, player_id: Any, game: Game, seat: int, computer: str) -> PersonNotice:
    """What tells the person whose seat was replaced, who reads the game no more: the one place a replace
    tells them. Their person stream's `seat_replaced` (the game, the seat and the computer), stored with the
    replace's write, all or none (game_write's `notices`)."""
    logger.info("game %s: seat %s handed to %s for absent player %s", game.pk, seat, computer, player_id)
    return PersonNotice(str(player_id), "seat_replaced", {"game": str(game.pk), "seat": seat, "by": computer})
