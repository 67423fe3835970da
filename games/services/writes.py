"""A game's write: the log of one accepted request (its moves and events, stamped with the version it brings
the game to), the computer turns it plays, the game's fields at that version, and saving it."""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from games import hooks, notifications, persistence, scheduling
from games.engine import FINISHED, PLAYING, Event, State, stored_event
from games.engine.players import TurnStep, computer_steps
from games.models import Game, GameEvent, GameHand, GameMove, GameSeat
from games.services.person_feed import (
    PersonNotice,
    game_notices,
    person_appends,
    person_events_add,
    person_streams_wake,
)
from games.shapes import GameView, TableEvent


@dataclass(frozen=True, slots=True)
class GameChange:
    """The result of an accepted request: the game as saved and the caller's view of it, with the events
    the request caused. `replayed` is true when an Idempotency-Key repeated an earlier request, whose first
    response `view` then is; `created` when the request made the game (a rematch asked for first)."""

    game: Game
    view: GameView
    replayed: bool = False
    created: bool = False


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
            persistence.log_row(
                GameMove,
                game,
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
                persistence.log_row(
                    GameEvent, game, seq=game.event_seq, version=self.version, type=event["type"], data=data
                )
            )
            if event["type"] == "hand_over":
                self.hands.append(
                    persistence.log_row(GameHand, game, hand_number=event["hand_number"], result=data)
                )

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
    return [stored_event(kind, data) for kind, data in persistence.hand_events_stored(game)] + pending


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
    return _played(log, state, computer_steps(state, levels, bytes.fromhex(state.seed), hand_events))


def _played(log: _Log, state: State, steps: Iterable[TurnStep]) -> State:
    """Plays computer turns' steps (from the engine's one computer-turn loop, computer_steps), each move
    logged; the state after the last."""
    for played in steps:
        state = played.state
        log.record(
            hand_number=state.hand_number, seat=played.seat, move=played.move.to_json(), events=played.events
        )
    return state


def _person_to_move(state: State, seats: list[GameSeat]) -> bool:
    return state.status == PLAYING and seats[state.current_seat].kind == GameSeat.Kind.PERSON


def _turn_clock(game: Game, before: State | None, state: State, seats: list[GameSeat]) -> None:
    """When a person's turn begins in this write, `turn_started_at` is now (the start from which the
    abandonment rule counts) and, at a clocked table, `turn_deadline` `turn_seconds` from now; both are kept
    while the same turn goes on, and null when no person is to move."""
    if not _person_to_move(state, seats):
        game.turn_started_at = None
        game.turn_deadline = None
        return
    same_turn = (
        before is not None
        and before.status == PLAYING
        and (before.hand_number, before.turn) == (state.hand_number, state.turn)
    )
    now = timezone.now()
    if not same_turn or game.turn_started_at is None:
        game.turn_started_at = now
    if game.turn_seconds is None:
        game.turn_deadline = None
    elif not same_turn or game.turn_deadline is None:
        game.turn_deadline = now + timedelta(seconds=game.turn_seconds)


def _time_text(moment: datetime) -> str:
    """A time as the API renders one (ISO 8601, UTC as `Z`), for an event's data."""
    text = moment.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _turn_deadlines(game: Game, state: State, log: _Log) -> None:
    """At a clocked table, each `turn_start` of the log carries `deadline`: the person's turn's deadline for
    the turn that is theirs now, null for the others (a computer's turn)."""
    if game.turn_seconds is None:
        return
    starts = [event for event in log.events if event.type == "turn_start"]
    for event in starts:
        event.data["deadline"] = None
    if starts and game.turn_deadline is not None and starts[-1].data["seat"] == state.current_seat:
        starts[-1].data["deadline"] = _time_text(game.turn_deadline)


def _set_state(
    game: Game, state: State, log: _Log, seats: list[GameSeat], *, before: State | None = None
) -> None:
    """The game's fields at the version the request brings it to (its log's), its turn clock included."""
    _turn_clock(game, before, state, seats)
    _turn_deadlines(game, state, log)
    game.state = state.to_json()
    game.version = log.version
    game.status = state.status
    game.hand_number = state.hand_number
    if state.status == FINISHED and game.finished_at is None:
        game.finished_at = timezone.now()


def game_write(
    game: Game,
    log: _Log,
    state: State | None = None,
    *,
    optimistic: bool = False,
    asynchronous_commit: bool = False,
    after_write: Callable[[], None] | None = None,
    notices: Sequence[PersonNotice] = (),
) -> bool:
    """The one way a game is saved: at its log's version, with the log's moves, events and hands. The game's
    fields are as the request left them (_set_state when it changed the game's state; a change that deals
    nothing, such as a seat taken at a waiting table, changes the version only). A new game is inserted; a
    game already saved is written only if it is still at the version before (games.persistence.game_save).
    A table's writes hold the game's row locked, so theirs cannot lose; the move path's is `optimistic` and
    may: it then writes nothing and returns False. Once written: `after_write` (the move guards' second
    look), the hand-over hooks when a hand ended (`state` is the game's new state), the person events of
    the people seated (games.services.person_feed.game_notices, with the caller's `notices`, in one pass
    over their counters: in the versioned write's own statement on PostgreSQL, else after it in the caller's
    transaction), and, once the transaction commits, the game's and the people's streams are woken to read
    it and a person's clocked turn timed.
    `asynchronous_commit` (PostgreSQL) spares the commit its wait for the WAL flush."""
    game.version = log.version
    person = [*game_notices(game, log.events), *notices]
    # PostgreSQL's versioned write stores the person events in its own statement (the move path's needs no
    # transaction); every other write stores them after it, in the caller's transaction.
    with_save = persistence.one_statement() and not game._state.adding
    rows = persistence.Rows(
        moves=log.moves,
        events=log.events,
        hands=log.hands,
        person=person_appends(person) if with_save else None,
    )
    if game._state.adding:
        persistence.game_insert(game, rows)
    else:
        saved = persistence.game_save(
            game, rows, read_version=log.version - 1, asynchronous_commit=asynchronous_commit
        )
        if not saved and optimistic:
            return False
        if not saved:
            raise RuntimeError(f"game {game.pk} changed under its row lock")
    if after_write is not None:
        after_write()
    if log.hand_ended:
        assert state is not None, "a hand ended without a new state"
        hooks.run_hand_over_hooks(game, state)
    if with_save:
        person_streams_wake(person)
    else:
        person_events_add(person)
    notifications.game_changed(game_id=game.id, event_seq=game.event_seq)
    scheduling.turn_clock_schedule(game)
    return True
