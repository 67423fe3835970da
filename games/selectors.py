"""The reads of `games`: a game as its player may see it, the player's games, the event log, hints and the
analysis of any position. Everything shown to a client is built from the engine's `observe`."""

from collections.abc import Iterable
from typing import Any, Literal, cast

from django.db.models import Q, QuerySet

from games import hooks
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
from games.errors import GameNotFound, ImpossiblePosition
from games.models import Game, GameEvent, Player
from games.shapes import EventPage, EventView, GamePlayer, GameSummary, GameView, Hint, PositionAnalysis

HUMAN_SEAT = 0
EVENTS_PAGE_MAX = 1000


def game_get(*, game_id: Any, player: Player) -> Game:
    """The player's game; someone else's game is as good as missing."""
    game = Game.objects.filter(id=game_id, player=player).first()
    if game is None:
        raise GameNotFound(game_id)
    return game


def game_list(*, player: Player, status: str | None = None) -> QuerySet[Game]:
    """The player's games, by the status their views show: a game closed by another app while in play
    (an expired ranked daily attempt) is listed as finished."""
    games = Game.objects.filter(player=player)
    if status == Game.Status.FINISHED:
        games = games.filter(Q(status=status) | hooks.closed_games())
    elif status is not None:
        games = games.filter(status=status).exclude(hooks.closed_games())
    return games


def _players(game: Game, player_name: str, observation: Observation) -> list[GamePlayer]:
    seats: list[tuple[str, Literal["human", "computer"], str | None]] = [(player_name, "human", None)]
    seats += [(o["name"], "computer", o["level"]) for o in game.opponents]
    return [
        {
            "seat": seat,
            "name": name,
            "kind": kind,
            "level": level,
            "hand_count": observation["hand_counts"][seat],
            "score": observation["scores"][seat],
        }
        for seat, (name, kind, level) in enumerate(seats)
    ]


def event_view(event: GameEvent, seat: int) -> EventView:
    """One logged event as `seat` may see it: another seat's draw does not name its card."""
    seen = observe_event(stored_event(event.type, event.data), seat)
    return cast(EventView, {"seq": event.seq, "version": event.version, **seen})


def game_view_of(
    *,
    game: Game,
    player: Player,
    events: Iterable[GameEvent],
    state: State | None = None,
    more_events_after: int | None = None,
) -> GameView:
    """The game view from a state already at hand and the events to show with it; `more_events_after` is
    the seq of the last of them when more events follow it."""
    if state is None:
        state = State.from_json(game.state)
    seat = HUMAN_SEAT
    observation = observe(state, seat)
    finished = state.status == FINISHED
    closed_reason = hooks.closed_reason(game) if state.status == PLAYING else None
    current_seat = None if closed_reason is not None else observation["current_seat"]
    return {
        "id": str(game.id),
        "version": game.version,
        "status": FINISHED if closed_reason is not None else state.status,
        "closed_reason": closed_reason,
        "rules": observation["rules"],
        "target_score": state.target_score,
        "hand_number": state.hand_number,
        "dealer": state.dealer,
        "current_seat": current_seat,
        "your_seat": seat,
        "is_your_turn": current_seat == seat,
        "players": _players(game, player.name, observation),
        "hand": observation["hand"],
        "table": {"stock": observation["stock"], "piles": observation["piles"]},
        "legal_moves": [] if closed_reason is not None else observation["legal_moves"],
        "events": [event_view(event, seat) for event in events],
        "more_events_after": more_events_after,
        "hand_result": observation["hand_results"][-1] if state.status != PLAYING else None,
        "winners": observation["winners"] if finished else None,
        "seed": game.seed if finished and hooks.seed_may_be_revealed(game) else None,
    }


def game_view(*, game: Game, player: Player, since_version: int | None = None) -> GameView:
    """The game as `player` (seat 0) may see it, with the events after `since_version` (none when None):
    at most EVENTS_PAGE_MAX of them, the first ones, so that a long game's read stays bounded; the rest are
    read from the event log after `more_events_after`."""
    events: list[GameEvent] = []
    more_events_after = None
    if since_version is not None and since_version < game.version:
        events = list(game.events.filter(version__gt=since_version).order_by("seq")[: EVENTS_PAGE_MAX + 1])
        if len(events) > EVENTS_PAGE_MAX:
            events = events[:EVENTS_PAGE_MAX]
            more_events_after = events[-1].seq
    return game_view_of(game=game, player=player, events=events, more_events_after=more_events_after)


def game_summary(*, game: Game, player: Player) -> GameSummary:
    """A game in the player's list: who plays, the scores and whose turn it is, without the cards."""
    state = State.from_json(game.state)
    observation = observe(state, HUMAN_SEAT)
    closed_reason = hooks.closed_reason(game) if state.status == PLAYING else None
    return {
        "id": str(game.id),
        "version": game.version,
        "status": FINISHED if closed_reason is not None else state.status,
        "closed_reason": closed_reason,
        "rules": observation["rules"],
        "target_score": state.target_score,
        "hand_number": state.hand_number,
        "is_your_turn": closed_reason is None and observation["current_seat"] == HUMAN_SEAT,
        "players": _players(game, player.name, observation),
        "winners": observation["winners"] if state.status == FINISHED else None,
        "created_at": game.created_at,
        "updated_at": game.updated_at,
    }


def game_events(*, game: Game, after: int, limit: int = EVENTS_PAGE_MAX) -> EventPage:
    """The event log after seq `after`, as seat 0 may see it; `last` is the seq to ask after next time."""
    page = list(game.events.filter(seq__gt=after).order_by("seq")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return {
        "events": [event_view(event, HUMAN_SEAT) for event in page],
        "last": page[-1].seq if page else after,
        "has_more": more,
    }


def game_hint(*, game: Game) -> Hint:
    """The moves sharp would make for the rest of the player's turn. The engine refuses a game or hand that
    is over as it refuses a move (game_over, hand_over)."""
    hooks.check_hint_allowed(game)
    state = State.from_json(game.state)
    check_turn(state, HUMAN_SEAT)
    moves = best_turn(
        state.rules, state.hands[HUMAN_SEAT], state.piles, threat=sharp_threat(state, HUMAN_SEAT)
    )
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
