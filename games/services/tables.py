"""The writes of tables: a new game or table, invitations, seats taken, the start and the rematch (seats left
and replaced are `seats`). Each locks the game row (or makes it) and saves it at its next version with the
events it logs."""

import secrets
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from games.engine import DERIVED, Rules, State, new_game
from games.engine.deal import SEED_BYTES
from games.engine.players import NAMES
from games.errors import GameNotFound, GameNotOver, GameStarted, InvitationNotFound, NotCreator, TableFull
from games.models import ABANDON_SECONDS_DEFAULT, Game, GameSeat, Player
from games.selectors import Seated, game_view, game_view_of, open_invitation, seat_kind, seated
from games.services.person_feed import PersonNotice, person_events_add, seated_people
from games.services.writes import GameChange, _computer_turns, _Log, _set_state, game_write
from games.shapes import GameView, Invitation

# The highest target a game may set: a game must end, and at 500 one ends within a few hundred hands even when
# every hand is a close one (the review's game at 2**31-1 never would, its log growing without end).
TARGET_SCORE_MAX = 500


# The computers' names: Millie, Roy and Bess in seats 1-3 as always; a computer taking a seat whose name
# another computer at the table has (or seat 0, a creator who left) takes the first name not at the table.
COMPUTER_NAMES = (*NAMES, "Ivy")
TURN_SECONDS_MIN = 10
TURN_SECONDS_MAX = 86400
# The abandonment rule of a table without a clock: from a minute to 30 days (24 hours by default).
ABANDON_SECONDS_MIN = 60
ABANDON_SECONDS_MAX = 30 * 86400
INVITATION_BYTES = 24  # 192 bits


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """A seat asked for when a game is made: a person (seat 0 is its maker) or a computer at a level."""

    kind: str
    level: str | None = None


def seating(seats: list[GameSeat]) -> list[list[Any]]:
    """The seats as the game's row keeps them for the move path's read (Game.seating)."""
    return [
        [row.seat, row.kind, row.level, row.name, str(row.player_id) if row.player_id else None]
        for row in seats
    ]


def _save_seating(game: Game, seats: list[GameSeat]) -> None:
    """After a write to the seats: the game's row gets them again."""
    game.seating = seating(seats)
    Game.objects.filter(pk=game.pk).update(seating=game.seating)


def _computer_name(seat: int, taken: set[str]) -> str:
    """Millie, Roy or Bess in seats 1-3; otherwise (seat 0, or that name taken) the first name not taken."""
    if 1 <= seat <= len(NAMES) and NAMES[seat - 1] not in taken:
        return NAMES[seat - 1]
    return next(name for name in COMPUTER_NAMES if name not in taken)


def game_create(
    *,
    player: Player,
    levels: list[str],
    rules: Rules,
    target_score: int | None,
    seed: bytes | None = None,
    seed_scheme: str = DERIVED,
) -> Game:
    """A new game: the player in seat 0 against one computer per level (Millie, Roy, Bess in order), the
    first hand dealt and any computer turns before the player's played. The game starts at version 1.
    The arguments are as the API's input serializer checked them (1 to 3 levels, a target from 1 to
    TARGET_SCORE_MAX, a seed of SEED_BYTES); `hard` is another name for `sharp`."""
    seats = [SeatSpec("person"), *(SeatSpec("computer", level) for level in levels)]
    return table_create(
        player=player, seats=seats, rules=rules, target_score=target_score, seed=seed, seed_scheme=seed_scheme
    )


def table_create(
    *,
    player: Player,
    seats: list[SeatSpec],
    rules: Rules,
    target_score: int | None,
    seed: bytes | None = None,
    seed_scheme: str = DERIVED,
    turn_seconds: int | None = None,
    abandon_seconds: int = ABANDON_SECONDS_DEFAULT,
    fill_level: str = "normal",
) -> Game:
    """A new game with 2 to 4 seats, the player in seat 0 (a person). Without another person it is dealt at
    once, any computer turns before the player's played, at version 1. With one it waits (`waiting`, version
    1, nothing dealt) behind an invitation link, until its people's seats are taken or the creator starts it.
    A clocked table has no abandonment rule. The arguments are as the API's input serializer checked them."""
    if seed is None:
        seed = secrets.token_bytes(SEED_BYTES)
    waiting = any(spec.kind == GameSeat.Kind.PERSON for spec in seats[1:])
    game = Game(
        player=player,
        opponents=[
            {"name": _computer_name(seat, set()) if spec.level else "", "level": spec.level}
            for seat, spec in enumerate(seats[1:], start=1)
        ],
        rules=rules.to_json(),
        target_score=target_score,
        seed=seed.hex(),
        state={},
        version=0,
        status=Game.Status.WAITING if waiting else Game.Status.PLAYING,
        turn_seconds=turn_seconds,
        abandon_seconds=abandon_seconds if turn_seconds is None else None,
        fill_level=fill_level,
        invitation_code=secrets.token_urlsafe(INVITATION_BYTES) if waiting else None,
    )
    rows = [
        GameSeat(
            game=game,
            seat=seat,
            kind=spec.kind,
            level=spec.level,
            player=player if seat == 0 else None,
            name=player.display_name if seat == 0 else (_computer_name(seat, set()) if spec.level else ""),
        )
        for seat, spec in enumerate(seats)
    ]
    game.seating = seating(rows)
    with transaction.atomic():
        log = _Log(game)
        if waiting:
            log.note([{"type": "seat_taken", "seat": 0, "name": player.display_name}])
            game_write(game, log)
        else:
            state = _first_hand(game, rows, log, seed_scheme=seed_scheme)
            _set_state(game, state, log, rows)
            game_write(game, log, state)
        rows[0].joined_at = game.created_at
        GameSeat.objects.bulk_create(rows)
    return game


def _locked_table(*, game_id: Any, player: Player) -> Seated:
    """The game at which `player` holds a seat, its row locked (SELECT … FOR UPDATE), with its seats read
    once the lock is held. Concurrent changes of one table (a start, a join, a leave) queue on the row; the
    seats are read by a statement of their own after it, so that they are as the change that held the lock
    before left them (read in the locking statement, they would be as they were when it began waiting). A
    game without the player's seat is 404 `game_not_found`."""
    game = Game.objects.select_for_update(of=("self",)).filter(pk=game_id, seats__player=player).first()
    if game is None:
        raise GameNotFound(game_id)
    seats = list(GameSeat.objects.filter(game=game).order_by("seat"))
    for row in seats:
        row.game = game
    return seated(seats, game_id=game_id, player=player)


def _first_hand(game: Game, seats: list[GameSeat], log: _Log, *, seed_scheme: str = DERIVED) -> State:
    """Deals a new game's first hand from its row (rules, seed, target) and plays the computers before the
    first person, each move logged."""
    state, events = new_game(
        rules=Rules.from_json(game.rules),
        players=len(seats),
        seed=bytes.fromhex(game.seed),
        target_score=game.target_score,
        seed_scheme=seed_scheme,
    )
    log.record(hand_number=state.hand_number, seat=None, move={"type": "deal"}, events=events)
    return _computer_turns(game, state, log, seats)


def _start(table: Seated, log: _Log, *, fill: bool) -> State:
    """Deals a waiting table's first hand: with `fill` (the creator starts it) computers at the table's
    fill level take the people's seats still free. The log says that the table started, with its seats, and
    the computers before the first person play."""
    game = table.game
    now = timezone.now()
    taken = {row.name for row in table.seats if row.kind == GameSeat.Kind.COMPUTER}
    filled = []
    for row in table.seats:
        if row.kind == GameSeat.Kind.PERSON and row.player_id is None and fill:
            row.kind = GameSeat.Kind.COMPUTER
            row.level = game.fill_level
            row.name = _computer_name(row.seat, taken)
            row.joined_at = now
            taken.add(row.name)
            filled.append(row)
    if filled:
        GameSeat.objects.bulk_update(filled, ["kind", "level", "name", "joined_at"])
        _save_seating(game, table.seats)
    log.note(
        [
            {
                "type": "game_started",
                "seats": [
                    {"seat": row.seat, "kind": seat_kind(row), "name": row.name, "level": row.level}
                    for row in table.seats
                ],
            }
        ]
    )
    return _first_hand(game, table.seats, log)


@dataclass(frozen=True, slots=True)
class Joined:
    """A seat taken through an invitation (or the one the player already held): the table and its view."""

    table: Seated
    view: GameView


def invitation_join(*, code: str, player: Player) -> Joined:
    """Seats the player in the first free person's seat of the table the code invites to. A person already
    seated there gets their view again (a retry), holding still one seat. When the last person's seat is
    taken the table starts. Refused: an unknown or revoked code (404, the game unnamed), a table whose people
    are all seated (409 `table_full`), one that has started otherwise (409 `game_started`)."""
    with transaction.atomic():
        game = open_invitation(code).select_for_update().first()
        if game is None:
            raise InvitationNotFound()
        seats = list(GameSeat.objects.filter(game=game).order_by("seat"))
        for row in seats:
            row.game = game
        mine = next((row for row in seats if row.player_id == player.pk), None)
        if mine is not None:
            table = Seated(game=game, seats=seats, seat=mine.seat)
            return Joined(table=table, view=game_view(game=game, seats=seats, seat=mine.seat))
        free = [row for row in seats if row.kind == GameSeat.Kind.PERSON and row.player_id is None]
        if game.status != Game.Status.WAITING or not free:
            asked = {0} | {seat for seat, o in enumerate(game.opponents, start=1) if o["level"] is None}
            people = {row.seat for row in seats if row.player_id is not None}
            raise TableFull() if asked <= people else GameStarted()
        row = free[0]
        row.player = player
        row.name = player.display_name
        row.joined_at = timezone.now()
        row.save(update_fields=["player", "name", "joined_at"])
        _save_seating(game, seats)
        table = Seated(game=game, seats=seats, seat=row.seat)
        log = _Log(game)
        log.note([{"type": "seat_taken", "seat": row.seat, "name": player.display_name}])
        if len(free) == 1:
            state = _start(table, log, fill=False)
            _set_state(game, state, log, seats)
            game_write(game, log, state)
            view = game_view_of(game=game, seats=seats, seat=row.seat, events=log.events, state=state)
        else:
            game_write(game, log)
            view = game_view_of(game=game, seats=seats, seat=row.seat, events=log.events)
    return Joined(table=table, view=view)


def game_start(*, game_id: Any, player: Player) -> GameChange:
    """The creator starts a waiting table: computers at its fill level take the free seats, the first hand is
    dealt and the computers before the first person play."""
    with transaction.atomic():
        table = _locked_table(game_id=game_id, player=player)
        game = table.game
        if game.player_id != player.pk:
            raise NotCreator("start it")
        if game.status != Game.Status.WAITING:
            raise GameStarted()
        log = _Log(game)
        state = _start(table, log, fill=True)
        _set_state(game, state, log, table.seats)
        game_write(game, log, state)
        view = game_view_of(game=game, seats=table.seats, seat=table.seat, events=log.events, state=state)
    return GameChange(game=game, view=view)


def invitation_revoke(*, game_id: Any, player: Player) -> None:
    """The creator revokes the table's invitation link: joins with it are 404 from now on (invitation_issue
    gives the table a new one), and the other people seated are told (their person streams'
    `invitation_revoked`). Revoking a link again, or a game without one, changes nothing."""
    with transaction.atomic():
        table = _locked_table(game_id=game_id, player=player)
        if table.game.player_id != player.pk:
            raise NotCreator("revoke its invitation")
        revoked = Game.objects.filter(
            pk=table.game.pk, invitation_code__isnull=False, invitation_revoked_at__isnull=True
        ).update(invitation_revoked_at=timezone.now())
        if revoked:
            person_events_add(
                [
                    PersonNotice(other, "invitation_revoked", {"game": str(table.game.pk)})
                    for other in seated_people(table.game).values()
                    if other != str(player.pk)
                ]
            )


@dataclass(frozen=True, slots=True)
class Issued:
    """A table's invitation link, and whether it is new (else it was live already)."""

    invitation: Invitation
    created: bool


def invitation_issue(*, game_id: Any, player: Player) -> Issued:
    """The creator's table gets a new invitation link when its link was revoked (`created`); the link it has
    when that one is live. The revoked code stays dead: a join with it is a 404. Refused: anyone but the
    creator (403 `not_creator`), a table that is not waiting (409 `game_started`)."""
    with transaction.atomic():
        table = _locked_table(game_id=game_id, player=player)
        game = table.game
        if game.player_id != player.pk:
            raise NotCreator("issue its invitation")
        if game.status != Game.Status.WAITING:
            raise GameStarted()
        live = game.invitation_code if game.invitation_revoked_at is None else None
        if live is not None:
            return Issued(invitation={"code": live}, created=False)
        code = secrets.token_urlsafe(INVITATION_BYTES)
        Game.objects.filter(pk=game.pk).update(invitation_code=code, invitation_revoked_at=None)
    return Issued(invitation={"code": code}, created=True)


def game_rematch(*, game_id: Any, player: Player) -> GameChange:
    """A finished game's next game at the same table: the people in their seats, the computers at their
    levels, the same rules, target, clock and abandonment rule, a new seed; dealt at once. The finished
    game's log ends with a `rematch` event naming it (its streams send it; its people's person streams get
    `rematch`). Asked again (by anyone seated), it is the same next game (`created` false)."""
    with transaction.atomic():
        table = _locked_table(game_id=game_id, player=player)
        game = table.game
        if game.rematch_id is not None:
            following = Game.objects.get(pk=game.rematch_id)
            seats = list(following.seats.all())
            seat = next((row.seat for row in seats if row.player_id == player.pk), None)
            if seat is None:
                raise GameNotFound(game.rematch_id)
            return GameChange(game=following, view=game_view(game=following, seats=seats, seat=seat))
        if game.status != Game.Status.FINISHED:
            raise GameNotOver()
        seed = secrets.token_bytes(SEED_BYTES)
        following = Game(
            player=player,
            opponents=[
                {"name": row.name if row.kind == GameSeat.Kind.COMPUTER else "", "level": row.level}
                for row in table.seats[1:]
            ],
            rules=game.rules,
            target_score=game.target_score,
            seed=seed.hex(),
            state={},
            version=0,
            turn_seconds=game.turn_seconds,
            abandon_seconds=game.abandon_seconds,
            fill_level=game.fill_level,
        )
        now = timezone.now()
        rows = [
            GameSeat(
                game=following,
                seat=row.seat,
                kind=row.kind,
                level=row.level,
                player_id=row.player_id,
                name=row.name,
                joined_at=now,
            )
            for row in table.seats
        ]
        following.seating = seating(rows)
        # The finished game's log says where the table went on, for its streams and its people's.
        ended = _Log(game)
        ended.note([{"type": "rematch", "new_game": str(following.pk)}])
        game_write(game, ended)
        log = _Log(following)
        state = _first_hand(following, rows, log)
        _set_state(following, state, log, rows)
        game_write(following, log, state)
        GameSeat.objects.bulk_create(rows)
        Game.objects.filter(pk=game.pk).update(rematch=following)
        game.rematch = following
        view = game_view_of(game=following, seats=rows, seat=table.seat, events=log.events, state=state)
    return GameChange(game=following, view=view, created=True)
