"""The writes of `games`: players and their tokens, new games and tables, seats taken and left, moves and new
hands. A move or a new hand reads the game through the request's player's seat in one query, checks its
version, runs the computer players' turns, and saves it at the next version with its appends to the move and
event logs (and a row for each hand that ended) in one optimistic write that applies only if no other request
changed the game since it was read (games.persistence). The table's own writes (a seat taken or left, the
start, the rematch) lock the game row, and raise its version too."""

import copy
import hashlib
import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Literal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Subquery
from django.utils import timezone

from games import hooks, notifications, persistence
from games.auth import BearerToken, bearer_checked_on_refusal, token_hash, token_new, token_seal, token_unseal
from games.engine import (
    DERIVED,
    FINISHED,
    PILES,
    PLAYING,
    EndTurn,
    Event,
    Move,
    MoveError,
    Play,
    Rules,
    State,
    check_in_hand,
    check_turn,
    new_game,
    next_hand,
    parse_move,
    play_refusal,
    step,
    stored_event,
)
from games.engine.deal import SEED_BYTES
from games.engine.players import NAMES, best_spot, computer_steps, computer_turn
from games.errors import (
    GameNotFound,
    GameNotOver,
    GameNotStarted,
    GameStarted,
    IdempotencyKeyReused,
    InvitationNotFound,
    MoveRefused,
    NotCreator,
    TableFull,
    TokenRotated,
    VersionConflict,
)
from games.models import (
    Game,
    GameEvent,
    GameHand,
    GameMove,
    GameSeat,
    IdempotentRequest,
    Player,
    TokenRotation,
)
from games.selectors import Seated, game_view, game_view_of, seated, sharp_threat
from games.shapes import GameView, TableEvent

MAX_MOVES = 200
# The highest target a game may set: a game must end, and at 500 one ends within a few hundred hands even when
# every hand is a close one (the review's game at 2**31-1 never would, its log growing without end).
TARGET_SCORE_MAX = 500
LEVEL_ALIASES = {"hard": "sharp"}


@dataclass(frozen=True, slots=True)
class GameChange:
    """The result of an accepted request: the game as saved and the caller's view of it, with the events
    the request caused. `replayed` is true when an Idempotency-Key repeated an earlier request, whose first
    response `view` then is; `created` when the request made the game (a rematch asked for first)."""

    game: Game
    view: GameView
    replayed: bool = False
    created: bool = False


# --- players ------------------------------------------------------------------------------------------------


def player_create(*, name: str) -> tuple[Player, str]:
    """A new player and its token, which is shown this once: only its hash is stored. The name is as the
    API's input serializer normalised and checked it (games.names)."""
    token = token_new()
    player = Player.objects.create(name=name, token_hash=token_hash(token))
    return player, token


@dataclass(frozen=True, slots=True)
class NewToken:
    """A rotation's new token; `replayed` when it is the one an earlier rotation with the same
    Idempotency-Key gave."""

    token: str
    replayed: bool = False


def player_token_rotate(*, player: Player, token: str, idempotency_key: str | None = None) -> NewToken:
    """Replaces the player's token `token` with a new one; the old one stops working at once. Only the current
    token is rotated from (a conditional update), so of concurrent rotations one wins and the others are
    refused. A retry sent with the replaced token and the winner's Idempotency-Key gets the same new token,
    for IDEMPOTENCY_KEY_TTL."""
    previous_hash = token_hash(token)
    with transaction.atomic():
        rotation = TokenRotation.objects.filter(
            previous_token_hash=previous_hash, created_at__gte=_idempotency_horizon()
        ).first()
        if rotation is not None:
            if idempotency_key and rotation.sealed_token and rotation.idempotency_key == idempotency_key:
                new = token_unseal(
                    rotation.sealed_token, previous_token=token, idempotency_key=idempotency_key
                )
                return NewToken(token=new, replayed=True)
            raise TokenRotated()
        new = token_new()
        # PostgreSQL holds a concurrent rotation's UPDATE until this one commits, then finds no row whose hash
        # is still the old one.
        replaced = Player.objects.filter(pk=player.pk, token_hash=previous_hash).update(
            token_hash=token_hash(new), token_rotated_at=timezone.now()
        )
        if not replaced:
            raise TokenRotated()
        sealed = ""
        if idempotency_key:
            sealed = token_seal(new, previous_token=token, idempotency_key=idempotency_key)
        try:
            with transaction.atomic():
                TokenRotation.objects.create(
                    player=player,
                    previous_token_hash=previous_hash,
                    idempotency_key=idempotency_key or "",
                    sealed_token=sealed,
                )
        except IntegrityError:
            # An older rotation from this token, past its window, still kept: this one replaces it.
            TokenRotation.objects.filter(previous_token_hash=previous_hash).update(
                player=player,
                idempotency_key=idempotency_key or "",
                sealed_token=sealed,
                created_at=timezone.now(),
            )
    player.token_hash = token_hash(new)
    return NewToken(token=new)


# --- the logs -----------------------------------------------------------------------------------------------


class _Log:
    """The moves and events of one accepted request, stamped with the version it brings the game to."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.version = game.version + 1
        self.moves: list[GameMove] = []
        self.events: list[GameEvent] = []
        self.hands: list[GameHand] = []

    def record(
        self, *, hand_number: int, seat: int | None, move: Mapping[str, Any], events: list[Event]
    ) -> None:
        game = self.game
        game.move_seq += 1
        self.moves.append(
            GameMove(
                game=game,
                seq=game.move_seq,
                hand_number=hand_number,
                seat=seat,
                move=move,
                version=self.version,
            )
        )
        self.note(events)

    def note(self, events: Sequence[Event | TableEvent]) -> None:
        """Events that no move caused: people taking and leaving seats, the table starting."""
        game = self.game
        for event in events:
            game.event_seq += 1
            data = {key: value for key, value in event.items() if key != "type"}
            self.events.append(
                GameEvent(game=game, seq=game.event_seq, version=self.version, type=event["type"], data=data)
            )
            if event["type"] == "hand_over":
                self.hands.append(GameHand(game=game, hand_number=event["hand_number"], result=data))

    @property
    def hand_ended(self) -> bool:
        return any(event.type == "hand_over" for event in self.events)


def _hand_events(game: Game, log: _Log) -> list[Event]:
    """The current hand's events so far, as the engine wrote them: those logged from its deal on, then this
    request's."""
    pending: list[Event] = [stored_event(event.type, event.data) for event in log.events]
    deals = [index for index, event in enumerate(pending) if event["type"] == "deal"]
    if deals:
        return pending[deals[-1] :]
    last_deal = GameEvent.objects.filter(game=game, type="deal").order_by("-seq").values("seq")[:1]
    stored = GameEvent.objects.filter(game=game, seq__gte=Subquery(last_deal)).order_by("seq")
    return [stored_event(kind, data) for kind, data in stored.values_list("type", "data")] + pending


def computer_levels(seats: list[GameSeat]) -> dict[int, str]:
    """The computer seats' levels by seat."""
    return {row.seat: row.level for row in seats if row.kind == GameSeat.Kind.COMPUTER and row.level}


def _computer_turns(game: Game, state: State, log: _Log, seats: list[GameSeat]) -> State:
    """Plays the computer seats' turns until a person is to move or the hand is over, each move logged.
    Sharp also reads the hand's public events as its seat saw them (what the others could not have held), so
    a game with a sharp seat loads them; the other levels need none, and their games no query. A table
    without a person left is not played on: nobody is there to see it."""
    levels = computer_levels(seats)
    if len(levels) == len(seats):
        return state
    hand_events = _hand_events(game, log) if "sharp" in levels.values() else None
    for played in computer_steps(state, levels, bytes.fromhex(state.seed), hand_events):
        state = played.state
        log.record(
            hand_number=state.hand_number, seat=played.seat, move=played.move.to_json(), events=played.events
        )
    return state


def _person_to_move(state: State, seats: list[GameSeat]) -> bool:
    return state.status == PLAYING and seats[state.current_seat].kind == GameSeat.Kind.PERSON


def _turn_clock(game: Game, before: State | None, state: State, seats: list[GameSeat]) -> None:
    """Sets `turn_deadline` at a clocked table: when a person's turn begins in this write, `turn_seconds` from
    now; kept while the same turn goes on; null when no person is to move."""
    if game.turn_seconds is None or not _person_to_move(state, seats):
        game.turn_deadline = None
        return
    same_turn = (
        before is not None
        and before.status == PLAYING
        and (before.hand_number, before.turn) == (state.hand_number, state.turn)
    )
    if not same_turn or game.turn_deadline is None:
        game.turn_deadline = timezone.now() + timedelta(seconds=game.turn_seconds)


def _saved(game: Game) -> None:
    """After every write to a game (the move path's, _commit's and _commit_events'): once it commits, the
    game's event streams are woken to read it, and a person's turn on the clock is timed."""
    notifications.game_changed(game_id=game.id, event_seq=game.event_seq)
    _turn_clock_schedule(game)


def _set_state(
    game: Game, state: State, log: _Log, seats: list[GameSeat], *, before: State | None = None
) -> None:
    """The game's fields at the version the request brings it to (its log's), its turn clock included."""
    _turn_clock(game, before, state, seats)
    game.state = state.to_json()
    game.version = log.version
    game.status = state.status
    game.hand_number = state.hand_number
    if state.status == FINISHED and game.finished_at is None:
        game.finished_at = timezone.now()


# --- games and tables ---------------------------------------------------------------------------------------

# The computers' names: Millie, Roy and Bess in seats 1-3 as always; a computer taking a seat whose name
# another computer at the table has (or seat 0, a creator who left) takes the first name not at the table.
COMPUTER_NAMES = (*NAMES, "Ivy")
TURN_SECONDS_MIN = 10
TURN_SECONDS_MAX = 86400
INVITATION_BYTES = 24  # 192 bits


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """A seat asked for when a game is made: a person (seat 0 is the creator) or a computer at a level."""

    kind: str
    level: str | None = None


def _seat_kind(row: GameSeat) -> Literal["person", "computer"]:
    return "person" if row.kind == GameSeat.Kind.PERSON else "computer"


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
    fill_level: str = "normal",
) -> Game:
    """A new game with 2 to 4 seats, the player in seat 0 (a person). Without another person it is dealt at
    once, any computer turns before the player's played, at version 1. With one it waits (`waiting`, version
    1, nothing dealt) behind an invitation link, until its people's seats are taken or the creator starts it.
    The arguments are as the API's input serializer checked them."""
    if seed is None:
        seed = secrets.token_bytes(SEED_BYTES)
    specs = [SeatSpec(spec.kind, LEVEL_ALIASES.get(spec.level or "", spec.level)) for spec in seats]
    waiting = any(spec.kind == GameSeat.Kind.PERSON for spec in specs[1:])
    game = Game(
        player=player,
        opponents=[
            {"name": _computer_name(seat, set()) if spec.level else "", "level": spec.level}
            for seat, spec in enumerate(specs[1:], start=1)
        ],
        rules=rules.to_json(),
        target_score=target_score,
        seed=seed.hex(),
        state={},
        version=0,
        status=Game.Status.WAITING if waiting else Game.Status.PLAYING,
        turn_seconds=turn_seconds,
        fill_level=LEVEL_ALIASES.get(fill_level, fill_level),
        invitation_code=secrets.token_urlsafe(INVITATION_BYTES) if waiting else None,
    )
    rows = [
        GameSeat(
            game=game,
            seat=seat,
            kind=spec.kind,
            level=spec.level,
            player=player if seat == 0 else None,
            name=player.name if seat == 0 else (_computer_name(seat, set()) if spec.level else ""),
        )
        for seat, spec in enumerate(specs)
    ]
    game.seating = seating(rows)
    with transaction.atomic():
        if waiting:
            log = _Log(game)
            log.note([{"type": "seat_taken", "seat": 0, "name": player.name}])
            game.version = log.version
            game.save()
            GameEvent.objects.bulk_create(log.events)
        else:
            log = _Log(game)
            state = _first_hand(game, rows, log, seed_scheme=seed_scheme)
            _commit(game, state, log, rows)
        rows[0].joined_at = game.created_at
        GameSeat.objects.bulk_create(rows)
    return game


def _commit(
    game: Game, state: State, log: _Log, seats: list[GameSeat], *, before: State | None = None
) -> None:
    """Saves a new game, or a game whose row this transaction holds locked (_locked_table), at its log's
    version with its logs (the versioned write cannot lose: no other write reaches the row meanwhile), then
    runs the hand-over hooks if a hand ended."""
    read_version = log.version - 1
    _set_state(game, state, log, seats, before=before)
    if game._state.adding:
        game.save()
        GameMove.objects.bulk_create(log.moves)
        GameEvent.objects.bulk_create(log.events)
        GameHand.objects.bulk_create(log.hands)
    else:
        rows = persistence.Rows(moves=log.moves, events=log.events, hands=log.hands)
        if not persistence.game_save(game, rows, read_version=read_version):
            raise RuntimeError(f"game {game.pk} changed under its row lock")
    if log.hand_ended:
        hooks.run_hand_over_hooks(game, state)
    _saved(game)


def _commit_events(game: Game, log: _Log) -> None:
    """Saves a change to a table that deals nothing (a seat taken or left while it waits) with its events."""
    game.version = log.version
    game.save(update_fields=["version", "event_seq", "updated_at"])
    GameEvent.objects.bulk_create(log.events)
    _saved(game)


def _locked_table(*, game_id: Any, player: Player) -> Seated:
    """The game at which `player` holds a seat, its row locked (SELECT … FOR UPDATE), with its seats: one
    query, the seats joined to the game where one of them is the player's. Concurrent requests on one game
    queue here; a game without the player's seat is 404 `game_not_found`."""
    seats = list(
        GameSeat.objects.select_related("game")
        .select_for_update(of=("game",))
        .filter(game_id=game_id, game__seats__player=player)
        .order_by("seat")
    )
    return seated(seats, game_id=game_id, player=player)


def _check_version(table: Seated, expected_version: int | None) -> None:
    game = table.game
    if expected_version is None or expected_version == game.version:
        return
    raise VersionConflict(
        version=game.version,
        expected=expected_version,
        current=game_view(game=game, seats=table.seats, seat=table.seat),
    )


def _check_started(game: Game) -> None:
    if game.status == Game.Status.WAITING:
        raise GameNotStarted()


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
                    {"seat": row.seat, "kind": _seat_kind(row), "name": row.name, "level": row.level}
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
        game = (
            Game.objects.select_for_update()
            .filter(invitation_code=code, invitation_revoked_at__isnull=True)
            .first()
        )
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
        row.name = player.name
        row.joined_at = timezone.now()
        row.save(update_fields=["player", "name", "joined_at"])
        _save_seating(game, seats)
        table = Seated(game=game, seats=seats, seat=row.seat)
        log = _Log(game)
        log.note([{"type": "seat_taken", "seat": row.seat, "name": player.name}])
        if len(free) == 1:
            state = _start(table, log, fill=False)
            _commit(game, state, log, seats)
            view = game_view_of(game=game, seats=seats, seat=row.seat, events=log.events, state=state)
        else:
            _commit_events(game, log)
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
        _commit(game, state, log, table.seats)
        view = game_view_of(game=game, seats=table.seats, seat=table.seat, events=log.events, state=state)
    return GameChange(game=game, view=view)


def invitation_revoke(*, game_id: Any, player: Player) -> None:
    """The creator revokes the table's invitation link: joins with it are 404 from now on. Revoking a link
    again, or a game without one, changes nothing."""
    with transaction.atomic():
        table = _locked_table(game_id=game_id, player=player)
        if table.game.player_id != player.pk:
            raise NotCreator("revoke its invitation")
        Game.objects.filter(
            pk=table.game.pk, invitation_code__isnull=False, invitation_revoked_at__isnull=True
        ).update(invitation_revoked_at=timezone.now())


LEAVE_LEVEL = "normal"


def seat_leave(*, game_id: Any, player: Player) -> None:
    """The player leaves the table. At a table in play (or over) a computer at `normal` takes the seat and
    the game goes on: when it was the seat's turn, the computer plays it now (and any computers after it).
    At a waiting table the seat is free again for the invitation, except the creator's, which a computer
    takes. The log says who left and who took the seat."""
    with transaction.atomic():
        table = _locked_table(game_id=game_id, player=player)
        game, seats = table.game, table.seats
        row = seats[table.seat]
        name = row.name
        log = _Log(game)
        if game.status == Game.Status.WAITING and row.seat != 0:
            row.player = None
            row.name = ""
            row.joined_at = None
            row.save(update_fields=["player", "name", "joined_at"])
            _save_seating(game, seats)
            log.note([{"type": "seat_left", "seat": row.seat, "name": name, "level": None}])
            _commit_events(game, log)
            return
        taken = {other.name for other in seats if other.kind == GameSeat.Kind.COMPUTER}
        row.kind = GameSeat.Kind.COMPUTER
        row.level = LEAVE_LEVEL
        row.player = None
        row.name = _computer_name(row.seat, taken)
        row.joined_at = timezone.now()
        row.save(update_fields=["kind", "level", "player", "name", "joined_at"])
        _save_seating(game, seats)
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
        if game.status == Game.Status.WAITING:
            _commit_events(game, log)
            return
        before = State.from_json(game.state)
        state = _computer_turns(game, before, log, seats)
        _commit(game, state, log, seats, before=before)


def game_rematch(*, game_id: Any, player: Player) -> GameChange:
    """A finished game's next game at the same table: the people in their seats, the computers at their
    levels, the same rules, target and clock, a new seed; dealt at once. Asked again (by anyone seated), it
    is the same next game (`created` false)."""
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
        log = _Log(following)
        state = _first_hand(following, rows, log)
        _commit(following, state, log, rows)
        GameSeat.objects.bulk_create(rows)
        Game.objects.filter(pk=game.pk).update(rematch=following)
        game.rematch = following
        view = game_view_of(game=following, seats=rows, seat=table.seat, events=log.events, state=state)
    return GameChange(game=following, view=view, created=True)


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def idempotency_keys_expire() -> int:
    """Deletes the stored responses to Idempotency-Keys, and the token rotations kept for their retries, older
    than IDEMPOTENCY_KEY_TTL; how many."""
    horizon = _idempotency_horizon()
    requests, _ = IdempotentRequest.objects.filter(created_at__lt=horizon).delete()
    rotations, _ = TokenRotation.objects.filter(created_at__lt=horizon).delete()
    return requests + rotations


def _idempotency_horizon() -> Any:
    return timezone.now() - settings.IDEMPOTENCY_KEY_TTL


def _replay(
    *, player: Player, key: str | None, stored: persistence.Stored | None, fingerprint: str
) -> GameView | None:
    """The first response to this Idempotency-Key (`stored`, as the request's read found it), if there was one
    within IDEMPOTENCY_KEY_TTL; the same key for another request is refused. Only accepted requests are
    stored: a refused one changed nothing, so its retry is re-checked. An expired key the beat job has not
    deleted yet is deleted here, and the request is new."""
    if key is None or stored is None:
        return None
    if stored.created_at < _idempotency_horizon():
        IdempotentRequest.objects.filter(player=player, key=key).delete()
        return None
    if stored.fingerprint != fingerprint:
        raise IdempotencyKeyReused()
    return stored.response


def _remember(*, player: Player, key: str | None, fingerprint: str, view: GameView) -> None:
    """Stores the response under its key. Another request with the same key, on another game and so not
    held back by this game's lock, may have stored its own meanwhile: this one is then refused (and rolled
    back) as a reuse of the key."""
    if key is None:
        return
    try:
        IdempotentRequest.objects.create(
            player=player, key=key, fingerprint=fingerprint, status_code=200, response=view
        )
    except IntegrityError:
        # No savepoint: the refusal propagates out of the request's transaction, which is rolled back whole.
        raise IdempotencyKeyReused() from None


def _resolve_open_play(state: State, seat: int, card: str, *, plain: bool) -> Move:
    """A play without `to` goes where sharp would put it; with `plain` (in a ranked daily attempt, where
    sharp's help is refused) on the first pile, in the order N E S W NE SE SW NW, that takes it. It is
    first refused as the engine refuses any play (not the seat's turn, the card not in hand), so that no
    search runs for a move that cannot be made."""
    check_turn(state, seat)
    check_in_hand(state, card)
    hand = state.hands[seat]
    if plain:
        spot = next(
            (pile for pile in PILES if play_refusal(state.rules, state.piles, card, pile) is None), None
        )
    else:
        spot = best_spot(state.rules, hand, state.piles, card, threat=sharp_threat(state, seat))
    if spot is None:
        raise MoveError("does_not_fit", f"{card} fits on no pile and in no empty space now.")
    return Play(card, spot)


def _parsed_moves(moves: list[Any]) -> list[Move]:
    """The moves read by the engine; the request's list is as the API's input serializer checked it (1 to
    MAX_MOVES of them)."""
    parsed = []
    for index, data in enumerate(moves):
        try:
            parsed.append(parse_move(data, allow_open_play=True))
        except MoveError as error:
            raise MoveRefused(error, index=index) from error
    return parsed


def _apply_moves(table: Seated, state: State, moves: list[Move], log: _Log) -> State:
    """The seat's moves in order; after each end_turn the computers take their turns, up to a person's."""
    game, seat = table.game, table.seat
    plain: bool | None = None  # asked of the hooks at the first open play only
    for index, move in enumerate(moves):
        hand_number = state.hand_number
        try:
            if isinstance(move, Play) and move.to is None:
                if plain is None:
                    plain = hooks.plain_placement(game)
                move = _resolve_open_play(state, seat, move.card, plain=plain)
            state, events = step(state, move, seat=seat)
        except MoveError as error:
            raise MoveRefused(error, index=index, move=json.dumps(move.to_json())) from error
        log.record(hand_number=hand_number, seat=seat, move=move.to_json(), events=events)
        if isinstance(move, EndTurn):
            state = _computer_turns(game, state, log, table.seats)
    return state


# A request whose events end at most turns (plays, pile moves, draws, turn ends and the computer players'
# turns: no deal, no hand or game end) and that carries no Idempotency-Key commits without waiting for
# PostgreSQL to flush its WAL to disk, which spares it an fsync, most of its time. It writes nothing but the
# game's row and its logs: computer turns are replayed from the game's seed and nothing outside the game
# records a turn (a daily submission is recorded at the hand's end). A crash can then lose the last fraction
# of a second of such requests: the game comes back whole at an earlier version (its row and both logs are one
# statement), and the client's next request is a 409 version_conflict with the game as it is. Whatever deals
# or ends a hand or the game (and so records a daily submission), every stored Idempotency-Key response, and
# every new game, player or token stays fully durable (README "Durability").
ASYNCHRONOUS_EVENTS = frozenset({"play", "move_pile", "draw", "end_turn", "turn_start"})


def _asynchronous_commit(log: _Log, idempotency_key: str | None) -> bool:
    return (
        idempotency_key is None
        and bool(log.events)
        and all(event.type in ASYNCHRONOUS_EVENTS for event in log.events)
    )


Change = Callable[[Seated, State, _Log], State]


def _game_change(
    *,
    game_id: Any,
    player: Player | BearerToken,
    expected_version: int | None,
    idempotency_key: str | None,
    fingerprint: str,
    change: Change,
) -> GameChange:
    """One accepted request to a game, optimistically: the game read with the request's player (one query,
    no lock), the change computed, then written only if the game is still at the version read. A request
    that lost the race to another one at that version is refused with 409 version_conflict and the game as
    it is now, whether or not it named a version, unless it is a retry of the winner (its Idempotency-Key),
    which answers with the winner's response. Of the requests raced at one version exactly one is applied."""
    loaded = persistence.game_load(game_id=game_id, player=player, idempotency_key=idempotency_key)
    game, who = loaded.game, loaded.player
    if game.player_id == who.pk:
        game.player = who
    table = Seated(game=game, seats=loaded.seats, seat=loaded.seat)
    replayed = _replay(player=who, key=idempotency_key, stored=loaded.stored, fingerprint=fingerprint)
    if replayed is not None:
        return GameChange(game=game, view=replayed, replayed=True)
    _check_started(game)
    hooks.check_moves_allowed(game)
    _check_version(table, expected_version)
    read_version = game.version
    guarded = hooks.moves_guarded(game)
    as_read = copy.copy(game) if guarded else game
    log = _Log(game)
    before = State.from_json(game.state)
    state = change(table, before, log)
    _set_state(game, state, log, table.seats, before=before)
    view = game_view_of(game=game, seats=table.seats, seat=table.seat, events=log.events, state=state)
    rows = persistence.Rows(moves=log.moves, events=log.events, hands=log.hands)
    # One statement on PostgreSQL is atomic on its own; what else the request writes (a daily submission when
    # a hand ended, the response to its Idempotency-Key) goes into the same transaction, and so do the move
    # guards' second look, with the row held (a daily attempt's closer may have closed it since the read).
    atomic = guarded or log.hand_ended or idempotency_key is not None or not persistence.one_statement()
    with transaction.atomic() if atomic else nullcontext():
        saved = persistence.game_save(
            game,
            rows,
            read_version=read_version,
            asynchronous_commit=_asynchronous_commit(log, idempotency_key),
        )
        if saved:
            if guarded:
                hooks.check_moves_allowed(as_read)
            if log.hand_ended:
                hooks.run_hand_over_hooks(game, state)
            _remember(player=who, key=idempotency_key, fingerprint=fingerprint, view=view)
            _saved(game)
    if saved:
        return GameChange(game=game, view=view)
    return _lost_race(
        game_id=game_id,
        player=who,
        read_version=read_version,
        idempotency_key=idempotency_key,
        fingerprint=fingerprint,
    )


def _lost_race(
    *, game_id: Any, player: Player, read_version: int, idempotency_key: str | None, fingerprint: str
) -> GameChange:
    """Another request changed the game after it was read: the winner's stored response when this is a
    retry of it, else 409 version_conflict with the game as it is now."""
    loaded = persistence.game_load(game_id=game_id, player=player, idempotency_key=idempotency_key)
    game = loaded.game
    replayed = _replay(player=player, key=idempotency_key, stored=loaded.stored, fingerprint=fingerprint)
    if replayed is not None:
        return GameChange(game=game, view=replayed, replayed=True)
    raise VersionConflict(
        version=game.version,
        expected=read_version,
        current=game_view(game=game, seats=loaded.seats, seat=loaded.seat),
    )


def game_moves_apply(
    *,
    game_id: Any,
    player: Player | BearerToken,
    moves: list[Any],
    expected_version: int | None,
    idempotency_key: str | None = None,
) -> GameChange:
    """Applies the moves of the player's seat in order, all or none; after each end_turn the computer players
    take their turns, up to a person's. The view's events are everything the request caused, as the seat may
    see them. `player` is the player, or the bearer token of the request, looked up with the game and its
    seat (InvalidToken when no player has it)."""
    if isinstance(player, BearerToken):
        with bearer_checked_on_refusal(player):
            parsed = _parsed_moves(moves)
    else:
        parsed = _parsed_moves(moves)
    return _game_change(
        game_id=game_id,
        player=player,
        expected_version=expected_version,
        idempotency_key=idempotency_key,
        fingerprint=_fingerprint("moves", str(game_id), moves, expected_version),
        change=lambda table, state, log: _apply_moves(table, state, parsed, log),
    )


def _deal(table: Seated, state: State, log: _Log) -> State:
    # The engine refuses a deal while a hand is in play or once the game is over (hand_in_progress,
    # game_over); the refusal goes to the caller as it is.
    state, events = next_hand(state)
    log.record(hand_number=state.hand_number, seat=None, move={"type": "deal"}, events=events)
    return _computer_turns(table.game, state, log, table.seats)


def game_hand_deal(
    *,
    game_id: Any,
    player: Player | BearerToken,
    expected_version: int | None = None,
    idempotency_key: str | None = None,
) -> GameChange:
    """Deals the next hand when one is over and the game is not, and plays any computer turns before the
    first person's. Any seated person may deal it."""
    return _game_change(
        game_id=game_id,
        player=player,
        expected_version=expected_version,
        idempotency_key=idempotency_key,
        fingerprint=_fingerprint("hands", str(game_id), expected_version),
        change=_deal,
    )


# --- the turn clock -----------------------------------------------------------------------------------------

# The level at which the clock plays a person's turn that ran out.
TIMED_OUT_LEVEL = "normal"
# A turn whose deadline is further off than this gets no task of its own (Redis redelivers a task whose ETA
# lies beyond its visibility timeout, an hour); the beat job plays it within seconds of its deadline.
TURN_CLOCK_TASK_HORIZON = timedelta(hours=1)


def _turn_clock_schedule(game: Game) -> None:
    """Once this write commits, queues the task that plays the turn of the person now to move if they have
    not moved by its deadline: with the version this write brings the game to, so that any later write (the
    person's move) makes it a no-op. Without a broker (tasks run in-process at once) nothing is queued, and
    no clock runs."""
    deadline = game.turn_deadline
    if deadline is None or deadline - timezone.now() > TURN_CLOCK_TASK_HORIZON:
        return
    from kingscorner.celery import app

    if app.conf.task_always_eager:
        return
    transaction.on_commit(partial(_turn_clock_queue, str(game.id), game.version, deadline))


def _turn_clock_queue(game_id: str, version: int, deadline: datetime) -> None:
    from games import tasks

    tasks.turn_time_out_queue(game_id, version, deadline)


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
        _, steps = computer_turn(before, TIMED_OUT_LEVEL, bytes.fromhex(before.seed))
        state = before
        for played in steps:
            state = played.state
            log.record(
                hand_number=state.hand_number, seat=seat, move=played.move.to_json(), events=played.events
            )
        state = _computer_turns(game, state, log, seats)
        _commit(game, state, log, seats, before=before)
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
