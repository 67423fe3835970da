"""The writes of `games`: players and their tokens, new games, moves and new hands. A change to a game reads
it with the request's player in one query, checks its version, runs the computer players' turns, and saves
it at the next version with its appends to the move and event logs (and a row for each hand that ended) in
one optimistic write that applies only if no other request changed the game since it was read
(games.persistence)."""

import copy
import hashlib
import json
import secrets
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Subquery
from django.utils import timezone

from games import hooks, persistence
from games.auth import BearerToken, bearer_checked_on_refusal, token_hash, token_new, token_seal, token_unseal
from games.engine import (
    DERIVED,
    FINISHED,
    PILES,
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
from games.engine.players import NAMES, best_spot, computer_steps
from games.errors import IdempotencyKeyReused, MoveRefused, TokenRotated, VersionConflict
from games.models import Game, GameEvent, GameHand, GameMove, IdempotentRequest, Player, TokenRotation
from games.selectors import HUMAN_SEAT, game_view, game_view_of, sharp_threat
from games.shapes import GameView

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
    view: GameView
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


def _set_state(game: Game, state: State, log: _Log) -> None:
    """The game's fields at the version the request brings it to (its log's)."""
    game.state = state.to_json()
    game.version = log.version
    game.status = state.status
    game.hand_number = state.hand_number
    if state.status == FINISHED and game.finished_at is None:
        game.finished_at = timezone.now()


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
        _set_state(game, state, log)
        game.save()
        GameMove.objects.bulk_create(log.moves)
        GameEvent.objects.bulk_create(log.events)
        GameHand.objects.bulk_create(log.hands)
        if log.hand_ended:
            hooks.run_hand_over_hooks(game, state)
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


Change = Callable[[Game, State, _Log], State]


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
    game.player = who
    replayed = _replay(player=who, key=idempotency_key, stored=loaded.stored, fingerprint=fingerprint)
    if replayed is not None:
        return GameChange(game=game, view=replayed, replayed=True)
    hooks.check_moves_allowed(game)
    _check_version(game, who, expected_version)
    read_version = game.version
    guarded = hooks.moves_guarded(game)
    as_read = copy.copy(game) if guarded else game
    log = _Log(game)
    state = change(game, State.from_json(game.state), log)
    _set_state(game, state, log)
    view = game_view_of(game=game, player=who, events=log.events, state=state)
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
        version=game.version, expected=read_version, current=game_view(game=game, player=player)
    )


def game_moves_apply(
    *,
    game_id: Any,
    player: Player | BearerToken,
    moves: list[Any],
    expected_version: int | None,
    idempotency_key: str | None = None,
) -> GameChange:
    """Applies the player's moves in order, all or none; after each end_turn the computer players take their
    turns. The view's events are everything the request caused. `player` is the player, or the bearer token
    of the request, looked up with the game (InvalidToken when no player has it)."""
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
        change=lambda game, state, log: _apply_moves(game, state, parsed, log),
    )


def _deal(game: Game, state: State, log: _Log) -> State:
    # The engine refuses a deal while a hand is in play or once the game is over (hand_in_progress,
    # game_over); the refusal goes to the caller as it is.
    state, events = next_hand(state)
    log.record(hand_number=state.hand_number, seat=None, move={"type": "deal"}, events=events)
    return _computer_turns(game, state, log)


def game_hand_deal(
    *,
    game_id: Any,
    player: Player | BearerToken,
    expected_version: int | None = None,
    idempotency_key: str | None = None,
) -> GameChange:
    """Deals the next hand when one is over and the game is not, and plays any computer turns before the
    player's."""
    return _game_change(
        game_id=game_id,
        player=player,
        expected_version=expected_version,
        idempotency_key=idempotency_key,
        fingerprint=_fingerprint("hands", str(game_id), expected_version),
        change=_deal,
    )
