"""The writes of `games`: players and their tokens, new games, moves and new hands. Each change to a game runs
in one transaction that locks the game row, checks its version, runs the computer players' turns, appends to
the move and event logs (and a row for each hand that ended), and raises the version by one."""

import hashlib
import json
import secrets
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, models, transaction
from django.db.models import Subquery, sql
from django.utils import timezone

from games import hooks, notifications
from games.auth import token_hash, token_new, token_seal, token_unseal
from games.engine import (
    DERIVED,
    FINISHED,
    PILES,
    EndTurn,
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
)
from games.engine.deal import SEED_BYTES
from games.engine.game import Event
from games.engine.players import NAMES, best_spot, computer_steps
from games.errors import GameNotFound, IdempotencyKeyReused, MoveRefused, TokenRotated, VersionConflict
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
from games.selectors import HUMAN_SEAT, game_view, game_view_of, sharp_threat

MAX_MOVES = 200
# The highest target a game may set: a game must end, and at 500 one ends within a few hundred hands even when
# every hand is a close one (the review's game at 2**31-1 never would, its log growing without end).
TARGET_SCORE_MAX = 500
LEVEL_ALIASES = {"hard": "sharp"}


@dataclass(frozen=True, slots=True)
class GameChange:
    """The result of an accepted request: the game as saved and the caller's view of it, with the events
    the request caused. `replayed` is true when an Idempotency-Key repeated an earlier request, whose first
    response `view` then is."""

    game: Game
    view: dict[str, Any]
    replayed: bool = False


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
        self, *, hand_number: int, seat: int | None, move: dict[str, Any], events: list[Event]
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
    pending: list[Event] = [{"type": event.type, **event.data} for event in log.events]
    deals = [index for index, event in enumerate(pending) if event["type"] == "deal"]
    if deals:
        return pending[deals[-1] :]
    last_deal = GameEvent.objects.filter(game=game, type="deal").order_by("-seq").values("seq")[:1]
    stored = GameEvent.objects.filter(game=game, seq__gte=Subquery(last_deal)).order_by("seq")
    return [{"type": kind, **data} for kind, data in stored.values_list("type", "data")] + pending


def _computer_turns(game: Game, state: State, log: _Log) -> State:
    """Plays the computer seats' turns until it is the player's turn again or the hand is over, each move
    logged. Sharp also reads the hand's public events as its seat saw them (what the others could not have
    held), so a game with a sharp seat loads them; the other levels need none, and their games no query."""
    levels = {seat: opponent["level"] for seat, opponent in enumerate(game.opponents, start=1)}
    hand_events = _hand_events(game, log) if "sharp" in levels.values() else None
    for played in computer_steps(state, levels, bytes.fromhex(state.seed), hand_events):
        state = played.state
        log.record(
            hand_number=state.hand_number, seat=played.seat, move=played.move.to_json(), events=played.events
        )
    return state


GAME_CHANGING_FIELDS = [
    "state",
    "version",
    "status",
    "hand_number",
    "move_seq",
    "event_seq",
    "finished_at",
    "updated_at",
]


def _insert_sql(model: type[models.Model], rows: list[Any]) -> tuple[str, tuple[Any, ...]]:
    """The one INSERT that bulk_create would send for `rows`, with its parameters."""
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    query = sql.InsertQuery(model)
    query.insert_values(fields, rows)
    [(statement, params)] = query.get_compiler(connection=connection).as_sql()
    return statement, tuple(params)


def _save_with_logs_in_one_statement(game: Game, log: _Log) -> None:
    """PostgreSQL: the game's UPDATE and the appends to both logs as one statement (the inserts as
    data-modifying CTEs), one round trip instead of three. The SQL is Django's own for each part."""
    game.updated_at = timezone.now()
    query = Game.objects.filter(pk=game.pk).query.chain(sql.UpdateQuery)
    # Django's query compiler is private API that django-stubs do not type (the move path's persistence
    # module is to replace this).
    query.add_update_values(  # type: ignore[attr-defined]
        {name: getattr(game, name) for name in GAME_CHANGING_FIELDS}
    )
    update, update_params = query.get_compiler(connection=connection).as_sql()
    inserts: list[str] = []
    params: list[Any] = []
    for name, model, rows in (
        ("moves", GameMove, log.moves),
        ("events", GameEvent, log.events),
        ("hands", GameHand, log.hands),
    ):
        if rows:
            insert, insert_params = _insert_sql(model, rows)
            inserts.append(f"{name} AS ({insert})")
            params.extend(insert_params)
    with_clause = f"WITH {', '.join(inserts)} " if inserts else ""
    with connection.cursor() as cursor:
        cursor.execute(with_clause + update, [*params, *update_params])


def _commit(game: Game, state: State, log: _Log) -> None:
    """Saves the game at its new version with its logs, then runs the hand-over hooks if a hand ended."""
    adding = game._state.adding
    game.state = state.to_json()
    game.version = log.version
    game.status = state.status
    game.hand_number = state.hand_number
    if state.status == FINISHED and game.finished_at is None:
        game.finished_at = timezone.now()
    if not adding and connection.vendor == "postgresql":
        _save_with_logs_in_one_statement(game, log)
    else:
        game.save(update_fields=None if adding else GAME_CHANGING_FIELDS)
        GameMove.objects.bulk_create(log.moves)
        GameEvent.objects.bulk_create(log.events)
        GameHand.objects.bulk_create(log.hands)
    if log.hand_ended:
        hooks.run_hand_over_hooks(game, state)
    # Every change to a game is saved here: once it commits, the game's streams are woken to read it.
    notifications.game_changed(game_id=game.id, event_seq=game.event_seq)


# --- games --------------------------------------------------------------------------------------------------


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
    levels = [LEVEL_ALIASES.get(level, level) for level in levels]
    if seed is None:
        seed = secrets.token_bytes(SEED_BYTES)
    state, events = new_game(
        rules=rules, players=len(levels) + 1, seed=seed, target_score=target_score, seed_scheme=seed_scheme
    )
    game = Game(
        player=player,
        opponents=[{"name": name, "level": level} for name, level in zip(NAMES, levels, strict=False)],
        rules=rules.to_json(),
        target_score=target_score,
        seed=seed.hex(),
        state={},
        version=0,
    )
    with transaction.atomic():
        log = _Log(game)
        log.record(hand_number=state.hand_number, seat=None, move={"type": "deal"}, events=events)
        state = _computer_turns(game, state, log)
        _commit(game, state, log)
        GameSeat.objects.bulk_create(
            [
                GameSeat(
                    game=game,
                    seat=0,
                    kind=GameSeat.Kind.PERSON,
                    player=player,
                    name=player.name,
                    joined_at=game.created_at,
                ),
                *(
                    GameSeat(game=game, seat=seat, kind=GameSeat.Kind.COMPUTER, **opponent)
                    for seat, opponent in enumerate(game.opponents, start=1)
                ),
            ]
        )
    return game


def _game_for_update(*, game_id: Any, player: Player) -> Game:
    game = Game.objects.select_for_update().filter(id=game_id, player=player).first()
    if game is None:
        raise GameNotFound(game_id)
    return game


def _check_version(game: Game, player: Player, expected_version: int | None) -> None:
    if expected_version is None or expected_version == game.version:
        return
    raise VersionConflict(
        version=game.version, expected=expected_version, current=game_view(game=game, player=player)
    )


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


def _replay(*, player: Player, key: str | None, fingerprint: str) -> dict[str, Any] | None:
    """The first response to this Idempotency-Key, if there was one within IDEMPOTENCY_KEY_TTL; the same key
    for another request is refused. Only accepted requests are stored: a refused one changed nothing, so its
    retry is re-checked. An expired key the beat job has not deleted yet is deleted here, and the request
    is new."""
    if key is None:
        return None
    stored = IdempotentRequest.objects.filter(player=player, key=key).first()
    if stored is not None and stored.created_at < _idempotency_horizon():
        stored.delete()
        stored = None
    if stored is None:
        return None
    if stored.fingerprint != fingerprint:
        raise IdempotencyKeyReused()
    response: dict[str, Any] = stored.response
    return response


def _remember(*, player: Player, key: str | None, fingerprint: str, view: dict[str, Any]) -> None:
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


def _resolve_open_play(state: State, card: str, *, plain: bool) -> Move:
    """A play without `to` goes where sharp would put it; with `plain` (in a ranked daily attempt, where
    sharp's help is refused) on the first pile, in the order N E S W NE SE SW NW, that takes it. It is
    first refused as the engine refuses any play (not the player's turn, the card not in hand), so that no
    search runs for a move that cannot be made."""
    check_turn(state, HUMAN_SEAT)
    check_in_hand(state, card)
    hand = state.hands[HUMAN_SEAT]
    if plain:
        spot = next(
            (pile for pile in PILES if play_refusal(state.rules, state.piles, card, pile) is None), None
        )
    else:
        spot = best_spot(state.rules, hand, state.piles, card, threat=sharp_threat(state, HUMAN_SEAT))
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


def _apply_moves(game: Game, state: State, moves: list[Move], log: _Log) -> State:
    plain: bool | None = None  # asked of the hooks at the first open play only
    for index, move in enumerate(moves):
        hand_number = state.hand_number
        try:
            if isinstance(move, Play) and move.to is None:
                if plain is None:
                    plain = hooks.plain_placement(game)
                move = _resolve_open_play(state, move.card, plain=plain)
            state, events = step(state, move, seat=HUMAN_SEAT)
        except MoveError as error:
            raise MoveRefused(error, index=index, move=json.dumps(move.to_json())) from error
        log.record(hand_number=hand_number, seat=HUMAN_SEAT, move=move.to_json(), events=events)
        if isinstance(move, EndTurn):
            state = _computer_turns(game, state, log)
    return state


# A request whose moves stay inside the player's turn (plays and pile moves: no turn or hand ends) commits
# without waiting for PostgreSQL to flush its WAL to disk, which spares it an fsync, most of its time. A crash
# can then lose the last fraction of a second of such moves: the game comes back whole at an earlier version
# (its row and both logs are in one transaction), and the client's next request is a 409 version_conflict
# with the game as it is. Whatever ends a turn or a hand (and so records a daily submission), and every new
# game, hand, player or token, stays fully durable.
IN_TURN_EVENTS = frozenset({"play", "move_pile"})


def _skip_wal_flush_if_in_turn(log: _Log) -> None:
    """PostgreSQL reads synchronous_commit at COMMIT, so it is set once the request's outcome is known; other
    databases commit as they always do."""
    if connection.vendor != "postgresql" or not log.events:
        return
    if all(event.type in IN_TURN_EVENTS for event in log.events):
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")


def game_moves_apply(
    *,
    game_id: Any,
    player: Player,
    moves: list[Any],
    expected_version: int | None,
    idempotency_key: str | None = None,
) -> GameChange:
    """Applies the player's moves in order, all or none; after each end_turn the computer players take their
    turns. The view's events are everything the request caused."""
    parsed = _parsed_moves(moves)
    fingerprint = _fingerprint("moves", str(game_id), moves, expected_version)
    with transaction.atomic():
        game = _game_for_update(game_id=game_id, player=player)
        replayed = _replay(player=player, key=idempotency_key, fingerprint=fingerprint)
        if replayed is not None:
            return GameChange(game=game, view=replayed, replayed=True)
        hooks.check_moves_allowed(game)
        _check_version(game, player, expected_version)
        log = _Log(game)
        state = _apply_moves(game, State.from_json(game.state), parsed, log)
        _commit(game, state, log)
        _skip_wal_flush_if_in_turn(log)
        view = game_view_of(game=game, player=player, events=log.events, state=state)
        _remember(player=player, key=idempotency_key, fingerprint=fingerprint, view=view)
    return GameChange(game=game, view=view)


def game_hand_deal(
    *,
    game_id: Any,
    player: Player,
    expected_version: int | None = None,
    idempotency_key: str | None = None,
) -> GameChange:
    """Deals the next hand when one is over and the game is not, and plays any computer turns before the
    player's."""
    fingerprint = _fingerprint("hands", str(game_id), expected_version)
    with transaction.atomic():
        game = _game_for_update(game_id=game_id, player=player)
        replayed = _replay(player=player, key=idempotency_key, fingerprint=fingerprint)
        if replayed is not None:
            return GameChange(game=game, view=replayed, replayed=True)
        hooks.check_moves_allowed(game)
        _check_version(game, player, expected_version)
        # The engine refuses a deal while a hand is in play or once the game is over (hand_in_progress,
        # game_over); the refusal goes to the caller as it is.
        state, events = next_hand(State.from_json(game.state))
        log = _Log(game)
        log.record(hand_number=state.hand_number, seat=None, move={"type": "deal"}, events=events)
        state = _computer_turns(game, state, log)
        _commit(game, state, log)
        view = game_view_of(game=game, player=player, events=log.events, state=state)
        _remember(player=player, key=idempotency_key, fingerprint=fingerprint, view=view)
    return GameChange(game=game, view=view)
