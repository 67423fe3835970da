"""Extension points through which other apps take part in a game without `games` importing them."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.db.models import Q

if TYPE_CHECKING:
    from games.engine import State
    from games.models import Game, Player

HandOverHook = Callable[["Game", "State"], None]
GameGuard = Callable[["Game"], None]
SeedRevealCheck = Callable[["Game"], bool]
ClosureCheck = Callable[["Game"], str | None]
ClosedGamesFilter = Callable[[], Q]
PlayerGuard = Callable[["Player"], None]
PlacementCheck = Callable[["Game"], bool]
GameCheck = Callable[["Game"], bool]


def _every_game(game: "Game") -> bool:
    return True


_hand_over_hooks: list[HandOverHook] = []
_hint_guards: list[GameGuard] = []
_move_guards: list[tuple[GameGuard, GameCheck]] = []
_seed_reveal_checks: list[SeedRevealCheck] = []
_closure_checks: list[ClosureCheck] = []
_closed_games_filters: list[ClosedGamesFilter] = []
_analysis_guards: list[PlayerGuard] = []
_plain_placement_checks: list[PlacementCheck] = []
_leave_guards: list[GameGuard] = []


def on_hand_over(hook: HandOverHook) -> HandOverHook:
    """Registers `hook(game, state)`, run inside the transaction of the move that ended a hand."""
    if hook not in _hand_over_hooks:
        _hand_over_hooks.append(hook)
    return hook


def hint_guard(guard: GameGuard) -> GameGuard:
    """Registers `guard(game)`, which raises a DomainError when hints are not allowed for the game."""
    if guard not in _hint_guards:
        _hint_guards.append(guard)
    return guard


def analysis_guard(guard: PlayerGuard) -> PlayerGuard:
    """Registers `guard(player)`, which raises a DomainError when the player may not analyse positions now."""
    if guard not in _analysis_guards:
        _analysis_guards.append(guard)
    return guard


def leave_guard(guard: GameGuard) -> GameGuard:
    """Registers `guard(game)`, which raises a DomainError when the game's person may not leave it."""
    if guard not in _leave_guards:
        _leave_guards.append(guard)
    return guard


def plain_placement_check(check: PlacementCheck) -> PlacementCheck:
    """Registers `check(game)`, which returns True where a play without `to` must not be placed by sharp's
    search but by the plain rule (the first pile that takes the card)."""
    if check not in _plain_placement_checks:
        _plain_placement_checks.append(check)
    return check


def move_guard(guard: GameGuard, *, applies: GameCheck = _every_game) -> GameGuard:
    """Registers `guard(game)`, which raises a DomainError when the game takes no moves now, for the games
    `applies(game)` (a check that needs no query) names. It runs on the game as read, before the change is
    computed; and for a game it applies to, again in the write's transaction once the game row is written
    (and so held), on the game as it was read, so that what another transaction did meanwhile (a closer
    that took the row first) is seen, and the write rolled back if the guard refuses it."""
    if all(registered != guard for registered, _ in _move_guards):
        _move_guards.append((guard, applies))
    return guard


def seed_reveal_check(check: SeedRevealCheck) -> SeedRevealCheck:
    """Registers `check(game)`, which returns False while a finished game's seed must stay secret."""
    if check not in _seed_reveal_checks:
        _seed_reveal_checks.append(check)
    return check


def closure_check(check: ClosureCheck, games_filter: ClosedGamesFilter) -> ClosureCheck:
    """Registers `check(game)`, which names why a game still in play is closed (its code, such as
    `attempt_expired`) or returns None; and `games_filter()`, the same condition as a filter on games, so
    that lists by status agree with the views."""
    if check not in _closure_checks:
        _closure_checks.append(check)
        _closed_games_filters.append(games_filter)
    return check


def run_hand_over_hooks(game: "Game", state: "State") -> None:
    for hook in _hand_over_hooks:
        hook(game, state)


def check_hint_allowed(game: "Game") -> None:
    for guard in _hint_guards:
        guard(game)


def check_analysis_allowed(player: "Player") -> None:
    for guard in _analysis_guards:
        guard(player)


def check_leave_allowed(game: "Game") -> None:
    for guard in _leave_guards:
        guard(game)


def plain_placement(game: "Game") -> bool:
    return any(check(game) for check in _plain_placement_checks)


def check_moves_allowed(game: "Game") -> None:
    for guard, applies in _move_guards:
        if applies(game):
            guard(game)


def moves_guarded(game: "Game") -> bool:
    """Whether any move guard applies to the game (and so runs again in the write's transaction)."""
    return any(applies(game) for _, applies in _move_guards)


def seed_may_be_revealed(game: "Game") -> bool:
    return all(check(game) for check in _seed_reveal_checks)


def closed_reason(game: "Game") -> str | None:
    """Why a game still in play takes no more moves, or None: it is then shown as over."""
    for check in _closure_checks:
        reason = check(game)
        if reason is not None:
            return reason
    return None


def closed_games() -> Q:
    """The games still in play that another app has closed."""
    closed = Q(pk__in=[])
    for games_filter in _closed_games_filters:
        closed |= games_filter()
    return closed
