"""The writes of play: moves and new hands. Each reads the game through the request's player's seat in one
query, checks its version, runs the computer players' turns, and saves it at the next version in one
optimistic write that applies only if no other request changed the game since it was read
(games.persistence)."""

import copy
import json
from collections.abc import Callable
from contextlib import nullcontext
from functools import partial
from typing import Any

from django.db import transaction

from games import hooks, persistence
from games.engine import (
    PILES,
    EndTurn,
    Move,
    MoveError,
    Play,
    State,
    check_in_hand,
    check_turn,
    next_hand,
    parse_move,
    play_refusal,
    step,
)
from games.engine.players import best_spot
from games.errors import GameNotStarted, MoveRefused, VersionConflict
from games.models import Game, Player
from games.rotation_replay import replay_end_on_first_use
from games.selectors import Seated, game_view, game_view_of, sharp_threat
from games.services.idempotency import _fingerprint, _remember, _replay
from games.services.person_feed import game_notices
from games.services.players import token_checked_on_refusal
from games.services.writes import GameChange, _computer_turns, _Log, _set_state, game_write
from games.tokens import TokenHash

MAX_MOVES = 200


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
# turns: no deal, no hand or game end), that carries no Idempotency-Key and that stores no person event for
# anyone but the requester commits without waiting for PostgreSQL to flush its WAL to disk, which spares it
# an fsync, most of its time. It writes nothing but the game's row, its logs and at most the requester's own
# `your_turn`: computer turns are replayed from the game's seed and nothing outside the game records a turn
# (a daily submission is recorded at the hand's end). A crash can then lose the last fraction of a second of
# such requests: the game comes back whole at an earlier version (its row, both logs and the requester's
# person events are one statement), and the client's next request is a 409 version_conflict with the game as
# it is. Another person's `your_turn` commits durably: a lost one would be a person event that another
# stream may have sent, whose seq the next write would give again. Whatever deals or ends a hand or the game
# (and so records a daily submission), every stored Idempotency-Key response, and every new game, player or
# token stays fully durable (docs/api.md, "Durability").
ASYNCHRONOUS_EVENTS = frozenset({"play", "move_pile", "draw", "end_turn", "turn_start"})


def _asynchronous_commit(game: Game, log: _Log, idempotency_key: str | None, requester: Player) -> bool:
    return (
        idempotency_key is None
        and bool(log.events)
        and all(event.type in ASYNCHRONOUS_EVENTS for event in log.events)
        and all(notice.player_id == str(requester.pk) for notice in game_notices(game, log.events))
    )


Change = Callable[[Seated, State, _Log], State]


def _game_change(
    *,
    game_id: Any,
    player: Player | TokenHash,
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
    # The moves look their token up here, not in authentication: its first use ends its rotation's replay.
    replay_end_on_first_use(who)
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
    # One statement on PostgreSQL is atomic on its own; what else the request writes (a daily submission when
    # a hand ended, the response to its Idempotency-Key) goes into the same transaction, and so do the move
    # guards' second look, with the row held (a daily attempt's closer may have closed it since the read).
    atomic = guarded or log.hand_ended or idempotency_key is not None or not persistence.one_statement()
    with transaction.atomic() if atomic else nullcontext():
        saved = game_write(
            game,
            log,
            state,
            optimistic=True,
            asynchronous_commit=_asynchronous_commit(game, log, idempotency_key, who),
            after_write=partial(hooks.check_moves_allowed, as_read) if guarded else None,
        )
        if saved:
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
        version=game.version,
        expected=read_version,
        current=game_view(game=game, seats=loaded.seats, seat=loaded.seat),
    )


def game_moves_apply(
    *,
    game_id: Any,
    player: Player | TokenHash,
    moves: list[Any],
    expected_version: int | None,
    idempotency_key: str | None = None,
) -> GameChange:
    """Applies the moves of the player's seat in order, all or none; after each end_turn the computer players
    take their turns, up to a person's. The view's events are everything the request caused, as the seat may
    see them. `player` is the player, or the hash of the request's token, looked up with the game and its
    seat (InvalidToken when no player has it)."""
    if isinstance(player, TokenHash):
        with token_checked_on_refusal(player):
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
    player: Player | TokenHash,
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
