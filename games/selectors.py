"""The reads of `games`: a game as one of its seated people may see it, a player's games, the event log, hints
and the analysis of any position. Everything shown to a client is built from the engine's `observe` and
`observe_event` for the reader's seat."""

import string
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, cast

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from games import hooks, persistence
from games.engine import (
    DECK,
    END_TURN,
    FINISHED,
    PILES,
    PLAYING,
    Observation,
    Rules,
    State,
    check_turn,
    observe,
    observe_event,
    parse_card,
    position_moves,
    position_refusal,
    stored_event,
)
from games.engine.players import best_turn, threat_of
from games.errors import GameNotFound, GameNotStarted, ImpossiblePosition, InvitationNotFound
from games.models import Game, GameEvent, GameSeat, Player
from games.rotation_replay import replay_end_on_first_use
from games.shapes import (
    EventPage,
    EventView,
    GameHeading,
    GamePlayer,
    GameSummary,
    GameView,
    Hint,
    Invitation,
    InvitationPreview,
    PositionAnalysis,
    SeatView,
    TableMembers,
)
from games.tokens import TokenHash

EVENTS_PAGE_MAX = 1000


@dataclass(frozen=True, slots=True)
class Seated:
    """A game as one of its seated people reads it: the game, its seats in order, and the reader's seat."""

    game: Game
    seats: list[GameSeat]
    seat: int


def game_get(*, game_id: Any, player: Player) -> Seated:
    """The game at which `player` holds a seat, with its seats; a game without them is as good as missing.
    One query: the seats of the game, joined to the game, where one of them is the player's."""
    seats = list(
        GameSeat.objects.select_related("game")
        .filter(game_id=game_id, game__seats__player=player)
        .order_by("seat")
    )
    return seated(seats, game_id=game_id, player=player)


def game_read(*, game_id: Any, player: Player | TokenHash) -> Seated:
    """What game_get reads, in the move path's one statement (games.persistence.game_load): the player by the
    request's token when it is not known yet (InvalidToken when no player has it), the player's seat at the
    game and the game's row, which holds every seat (`seating`); 404 `game_not_found` when none is theirs."""
    loaded = persistence.game_load(game_id=game_id, player=player, idempotency_key=None)
    # The token is looked up here, not in authentication: its first use ends its rotation's replay.
    replay_end_on_first_use(loaded.player)
    game = loaded.game
    if game.player_id == loaded.player.pk:
        game.player = loaded.player
    return Seated(game=game, seats=loaded.seats, seat=loaded.seat)


def seated(seats: list[GameSeat], *, game_id: Any, player: Player) -> Seated:
    """The player's place among a game's seats (read joined to their game): 404 `game_not_found` when none
    is theirs."""
    mine = next((row.seat for row in seats if row.player_id == player.pk), None)
    if mine is None:
        raise GameNotFound(game_id)
    game = seats[0].game
    for row in seats:
        row.game = game
    return Seated(game=game, seats=seats, seat=mine)


def game_list(*, player: Player, status: str | None = None) -> QuerySet[Game]:
    """The games at which the player holds a seat, by the status their views show (a game closed by another
    app while in play, an expired ranked daily attempt, is listed as finished), with their seats."""
    games = Game.objects.filter(seats__player=player).prefetch_related("seats")
    if status == Game.Status.FINISHED:
        games = games.filter(Q(status=status) | hooks.closed_games())
    elif status is not None:
        games = games.filter(status=status).exclude(hooks.closed_games())
    return games


def _players(seats: list[GameSeat], observation: Observation | None) -> list[GamePlayer]:
    return [
        {
            "seat": row.seat,
            "name": row.name or None,
            "kind": seat_kind(row),
            "level": row.level,
            "hand_count": observation["hand_counts"][row.seat] if observation else 0,
            "score": observation["scores"][row.seat] if observation else 0,
        }
        for row in seats
    ]


def seat_kind(row: GameSeat) -> Literal["person", "computer"]:
    """The word for a seat's kind everywhere a client reads one: `person` or `computer`."""
    return "person" if row.kind == GameSeat.Kind.PERSON else "computer"


def _seat_views(seats: list[GameSeat], seat: int) -> list[SeatView]:
    return [
        {
            "seat": row.seat,
            "kind": seat_kind(row),
            "name": row.name or None,
            "level": row.level,
            "you": row.seat == seat,
        }
        for row in seats
    ]


def _invitation(game: Game) -> Invitation | None:
    """The invitation link while it takes people: the table waits and the link is not revoked."""
    if game.status != Game.Status.WAITING or not game.invitation_code or game.invitation_revoked_at:
        return None
    return {"code": game.invitation_code}


# The characters an invitation code is drawn from (secrets.token_urlsafe), and its column's length.
_INVITATION_CODE_CHARACTERS = frozenset(string.ascii_letters + string.digits + "-_")
_INVITATION_CODE_MAX_LENGTH = 64


def open_invitation(code: str) -> QuerySet[Game]:
    """The table an open (not revoked) invitation code names, as a query: none for a string no code can be
    (a character outside the codes' URL-safe alphabet, such as a NUL, which PostgreSQL's text cannot hold and
    would refuse as an error), so that it is a 404 `invitation_not_found` as an unknown code is."""
    if len(code) > _INVITATION_CODE_MAX_LENGTH or not _INVITATION_CODE_CHARACTERS.issuperset(code):
        return Game.objects.none()
    return Game.objects.filter(invitation_code=code, invitation_revoked_at__isnull=True)


def invitation_preview(*, code: str, player: Player | None) -> InvitationPreview:
    """What an open invitation shows whoever holds its code (a token is not needed): who made the table, who
    sits where, the rules, the target and the clock, and the status, so that a person decides before joining.
    No card, no seed. An unknown or revoked code is InvitationNotFound, as a join's is."""
    game = open_invitation(code).select_related("player").first()
    if game is None:
        raise InvitationNotFound()
    seats = list(GameSeat.objects.filter(game=game).order_by("seat"))
    mine = next((row.seat for row in seats if player is not None and row.player_id == player.pk), None)
    status, _ = status_shown(game)
    return {
        "code": code,
        "status": status,
        "inviter": game.player.display_name,
        "seats": _seat_views(seats, -1 if mine is None else mine),
        "free_seats": sum(1 for row in seats if row.kind == GameSeat.Kind.PERSON and row.player_id is None)
        if game.status == Game.Status.WAITING
        else 0,
        "rules": Rules.from_json(game.rules).to_json(),
        "target_score": game.target_score,
        "turn_seconds": game.turn_seconds,
        "game": None if mine is None else str(game.id),
    }


def event_view(event: GameEvent, seat: int) -> EventView:
    """One logged event as `seat` may see it: another seat's draw does not name its card. The table's own
    events (seats taken and left, the start, a turn timed out) name no card and pass as they are."""
    seen = observe_event(stored_event(event.type, event.data), seat)
    return cast(EventView, {"seq": event.seq, "version": event.version, **seen})


def creator_seat(game: Game, seats: list[GameSeat]) -> int | None:
    """The seat of the table's creator (who may start it and manage its invitation): who made it, or the
    person the role passed to when the creator left; None once no person is seated."""
    return next(
        (row.seat for row in seats if row.player_id is not None and row.player_id == game.player_id), None
    )


def replaceable_at(game: Game, seats: list[GameSeat]) -> datetime | None:
    """When another person at the table may hand the seat of the person to move to a computer (the
    abandonment rule): `abandon_seconds` after their turn began. None at a clocked table (its clock plays an
    absent person's turns), when no person is to move, or when no other person is seated."""
    if game.turn_seconds is not None or game.abandon_seconds is None or game.turn_started_at is None:
        return None
    if sum(row.player_id is not None for row in seats) < 2:
        return None
    return game.turn_started_at + timedelta(seconds=game.abandon_seconds)


def _table_members(game: Game, seats: list[GameSeat], seat: int) -> TableMembers:
    """What a view says of the table itself: its seats and creator, the invitation, the clock or the
    abandonment rule, and the rematch."""
    return {
        "seats": _seat_views(seats, seat),
        "invitation": _invitation(game),
        "turn_seconds": game.turn_seconds,
        "turn_deadline": game.turn_deadline,
        "rematch": str(game.rematch_id) if game.rematch_id else None,
        "creator_seat": creator_seat(game, seats),
        "abandon_seconds": game.abandon_seconds,
        "turn_started_at": game.turn_started_at,
        "replaceable_at": replaceable_at(game, seats),
    }


def status_shown(game: Game) -> tuple[str, str | None]:
    """The status a game shows, and why it was closed: a hand still in play in a game another app closed (an
    expired ranked daily attempt) shows as finished, with the reason; any other game as it is. The one place
    this rule is written (game_list filters by it in SQL through hooks.closed_games)."""
    closed_reason = hooks.closed_reason(game) if game.status == Game.Status.PLAYING else None
    return (FINISHED if closed_reason is not None else game.status), closed_reason


def _game_heading(
    game: Game, seats: list[GameSeat], seat: int, state: State | None, observation: Observation | None
) -> GameHeading:
    """What every view of a game says of it, the list's summary included: from the seat's observation of
    `state`, or, at a table that waits for its people (nothing dealt, no state), from the game's row."""
    status, closed_reason = status_shown(game)
    current_seat = None
    if observation is not None and closed_reason is None:
        current_seat = observation["current_seat"]
    return {
        "id": str(game.id),
        "version": game.version,
        "status": status,
        "closed_reason": closed_reason,
        "rules": observation["rules"] if observation else Rules.from_json(game.rules).to_json(),
        "target_score": game.target_score,
        "hand_number": state.hand_number if state else 0,
        "your_seat": seat,
        "is_your_turn": current_seat is not None and current_seat == seat,
        "players": _players(seats, observation),
        "winners": observation["winners"] if state and observation and state.status == FINISHED else None,
    }


def game_view_of(
    *,
    game: Game,
    seats: list[GameSeat],
    seat: int,
    events: Iterable[GameEvent],
    state: State | None = None,
    more_events_after: int | None = None,
) -> GameView:
    """The game as `seat` sees it, from a state already at hand and the events to show with it (each as that
    seat may see it); `more_events_after` is the seq of the last of them when more events follow it. A table
    that waits for its people shows nothing dealt."""
    if state is None and game.status != Game.Status.WAITING:
        state = State.from_json(game.state)
    observation = observe(state, seat) if state else None
    heading = _game_heading(game, seats, seat, state, observation)
    in_play = observation is not None and heading["closed_reason"] is None
    finished = state is not None and state.status == FINISHED
    # The members in the order they have always had, which a 409's `current` (the view as it is) shows.
    return {
        "id": heading["id"],
        "version": heading["version"],
        "status": heading["status"],
        "closed_reason": heading["closed_reason"],
        "rules": heading["rules"],
        "target_score": heading["target_score"],
        "hand_number": heading["hand_number"],
        "dealer": state.dealer if state else None,
        "current_seat": observation["current_seat"] if observation and in_play else None,
        "your_seat": heading["your_seat"],
        "is_your_turn": heading["is_your_turn"],
        "players": heading["players"],
        "hand": observation["hand"] if observation else [],
        "table": {
            "stock": observation["stock"] if observation else 0,
            "piles": observation["piles"] if observation else {name: [] for name in PILES},
        },
        "legal_moves": observation["legal_moves"] if observation and in_play else [],
        "events": [event_view(event, seat) for event in events],
        "more_events_after": more_events_after,
        "hand_result": observation["hand_results"][-1]
        if state and observation and state.status != PLAYING
        else None,
        "winners": heading["winners"],
        "seed": game.seed if finished and hooks.seed_may_be_revealed(game) else None,
        **_table_members(game, seats, seat),
    }


def game_view(
    *, game: Game, seats: list[GameSeat] | None = None, seat: int, since_version: int | None = None
) -> GameView:
    """The game as `seat` may see it, with the events after `since_version` (none when None): at most
    EVENTS_PAGE_MAX of them, the first ones, so that a long game's read stays bounded; the rest are read from
    the event log after `more_events_after`. `seats` come from the game's row when not given (from its
    GameSeat rows for a game made before tables)."""
    if seats is None:
        seats = persistence.game_seats(game)
    if seats is None:
        seats = list(game.seats.all())
    events: list[GameEvent] = []
    more_events_after = None
    if since_version is not None and since_version < game.version:
        events = persistence.game_events_after(game=game, version=since_version, limit=EVENTS_PAGE_MAX + 1)
        if len(events) > EVENTS_PAGE_MAX:
            events = events[:EVENTS_PAGE_MAX]
            more_events_after = events[-1].seq
    return game_view_of(game=game, seats=seats, seat=seat, events=events, more_events_after=more_events_after)


def seated_view(seated: Seated, *, since_version: int | None = None) -> GameView:
    return game_view(game=seated.game, seats=seated.seats, seat=seated.seat, since_version=since_version)


def game_summary(*, game: Game, player: Player) -> GameSummary:
    """A game in the player's list: who plays, the scores and whose turn it is, without the cards. The
    game's seats are prefetched (game_list)."""
    seats = list(game.seats.all())
    seat = next(row.seat for row in seats if row.player_id == player.pk)
    state = None if game.status == Game.Status.WAITING else State.from_json(game.state)
    observation = observe(state, seat) if state else None
    return {
        **_game_heading(game, seats, seat, state, observation),
        "created_at": game.created_at,
        "updated_at": game.updated_at,
    }


def game_events(*, game: Game, seat: int, after: int, limit: int = EVENTS_PAGE_MAX) -> EventPage:
    """The event log after seq `after`, as `seat` may see it; `last` is the seq to ask after next time."""
    page = list(game.events.filter(seq__gt=after).order_by("seq")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return {
        "events": [event_view(event, seat) for event in page],
        "last": page[-1].seq if page else after,
        "has_more": more,
    }


def game_hint(*, game: Game, seat: int) -> Hint:
    """The moves sharp would make for the rest of `seat`'s turn. The engine refuses a game or hand that is
    over, or another seat's turn, as it refuses a move (game_over, hand_over, not_your_turn)."""
    if game.status == Game.Status.WAITING:
        raise GameNotStarted()
    hooks.check_hint_allowed(game)
    state = State.from_json(game.state)
    check_turn(state, seat)
    moves = best_turn(state.rules, state.hands[seat], state.piles, threat=sharp_threat(state, seat))
    return {"version": game.version, "moves": [move.to_json() for move in moves]}


def sharp_threat(state: State, seat: int) -> float:
    """How pressing sharp finds it, in `seat`, to leave little on the table: as a computer player in that
    seat reads it from the others' hand sizes, so that hints and open plays are what sharp would do there."""
    return threat_of([len(hand) for hand in state.hands], seat)


def position_analysis(
    *, player: Player | None, rules: Rules, hand: list[str], piles: dict[str, list[str]], stock: int = 0
) -> PositionAnalysis:
    """The legal moves and sharp's best turn from a position a player sees: a hand and the table, in card
    codes as a client writes them, and the stock's size. A position no game can reach is refused, and so is
    a caller (`player`, None when anonymous) whom another app refuses analysis now."""
    if player is not None:
        hooks.check_analysis_allowed(player)
    hand, piles = _position(hand, piles, stock)
    refusal = position_refusal(rules, piles)
    if refusal is not None:
        raise ImpossiblePosition(*refusal)
    legal = [*position_moves(rules, hand, piles), END_TURN]
    return {
        "legal_moves": [move.to_json() for move in legal],
        "best_turn": [move.to_json() for move in best_turn(rules, hand, piles)],
    }


def _position(
    hand_codes: list[str], pile_codes: dict[str, list[str]], stock: int
) -> tuple[list[str], dict[str, list[str]]]:
    """The hand and the eight piles in canonical codes (the engine refuses a code it cannot read); a card
    may be in one place only, and the hand, the piles and the stock hold no more than the deck."""
    hand = [parse_card(code) for code in hand_codes]
    piles = {name: [parse_card(code) for code in pile_codes.get(name, [])] for name in PILES}
    seen: set[str] = set()
    for card in [*hand, *(card for pile in piles.values() for card in pile)]:
        if card in seen:
            raise ImpossiblePosition("duplicate_card", f"{card} is in more than one place.")
        seen.add(card)
    if len(seen) + stock > len(DECK):
        raise ImpossiblePosition(
            "too_many_cards",
            f"{len(seen)} cards in hand and on the table and {stock} in the stock: "
            f"more than the deck's {len(DECK)}.",
        )
    return hand, piles


# --- streams ------------------------------------------------------------------------------------------------

# Events a stream reads from the log at a time.
STREAM_PAGE = 500


def game_seat_of(*, game_id: Any, player: Player) -> GameSeat:
    """The player's seat at the game, with the game; someone else's game is as good as missing."""
    seat = GameSeat.objects.select_related("game").filter(game_id=game_id, player=player).first()
    if seat is None:
        raise GameNotFound(game_id)
    return seat


def game_over(game: Game) -> bool:
    """Whether the game takes no more moves: finished, or closed by another app (an expired ranked daily
    attempt)."""
    return status_shown(game)[0] == Game.Status.FINISHED


@dataclass(frozen=True, slots=True)
class StreamStart:
    seat: int
    # The game is over and the client has its last event: there is nothing to stream.
    done: bool


def rematch_wait(game: Game) -> float | None:
    """For a finished game without a rematch yet: the seconds left of REMATCH_STREAM_SECONDS after its end,
    during which its streams stay open for the `rematch` event; None when they end after its last event
    (not over, a rematch made, the window passed)."""
    if not game_over(game) or game.rematch_id is not None or game.finished_at is None:
        return None
    left = (
        game.finished_at + timedelta(seconds=settings.REMATCH_STREAM_SECONDS) - timezone.now()
    ).total_seconds()
    return left if left > 0 else None


def stream_start(*, game_id: Any, player: Player, after: int) -> StreamStart:
    """Where a stream of the game for the player starts: their seat, and whether anything is left to send
    (nothing once the game is over, the client has its last event and no rematch may follow in the
    stream's window)."""
    # The move path's one prepared statement (its player's row, read again, is not used): a stream open
    # costs no statement built by the ORM.
    loaded = persistence.game_load(game_id=game_id, player=player, idempotency_key=None)
    game = loaded.game
    done = game_over(game) and after >= game.event_seq and rematch_wait(game) is None
    return StreamStart(seat=loaded.seat, done=done)


@dataclass(frozen=True, slots=True)
class StreamPage:
    """The events after a seq, as a seat may see them, at most STREAM_PAGE of them."""

    events: list[EventView]
    last: int  # the seq of the last event read, or the seq asked after when there were none
    more: bool  # more events follow already
    over: bool  # the game is over and these are its last events
    closes_in: float | None = None  # the game is over: seconds its stream waits yet for a rematch


@dataclass(frozen=True, slots=True)
class GameLog:
    """What a game's streams read when it changes: the game's row, who sits where, and the events after a
    seq (at most STREAM_PAGE), as they were logged, for each stream to take its own seat's view of."""

    game: Game
    people: dict[int, Any]  # seat -> the player sitting there, for each seat a person holds
    after: int
    events: list[GameEvent]


def stream_log(*, game_id: Any, after: int) -> GameLog | None:
    """The game's log after seq `after`, for its streams; None for a game that is gone. Every event up to the
    game row's `event_seq` has committed, so the log never shows part of a write. One statement (prepared,
    on PostgreSQL), the seats read from the row's seating (kept with the seat rows); a game made before
    tables has none there, and its seats are read."""
    read = persistence.game_log_after(game_id=game_id, after=after, limit=STREAM_PAGE)
    if read is None:
        return None
    game, events = read
    seats = persistence.game_seats(game)
    if seats is None:
        seats = list(GameSeat.objects.filter(game_id=game_id))
    people = {row.seat: row.player_id for row in seats if row.player_id is not None}
    return GameLog(game=game, people=people, after=after, events=events)


def stream_page(log: GameLog | None, *, player_id: Any, seat: int, after: int) -> StreamPage | None:
    """The next page of a seat's stream, from a log read after `after` or earlier; None once the player no
    longer sits there (a person who left sees nothing more of the seat a computer now plays)."""
    if log is None or str(log.people.get(seat)) != str(player_id):
        return None
    assert log.after <= after
    events = [event for event in log.events if event.seq > after]
    # Without a new event, every event read is at or before `after`.
    last = events[-1].seq if events else after
    game = log.game
    closes_in = rematch_wait(game)
    return StreamPage(
        events=[event_view(event, seat) for event in events],
        last=last,
        more=last < game.event_seq,
        over=last >= game.event_seq and game_over(game) and closes_in is None,
        closes_in=closes_in,
    )
