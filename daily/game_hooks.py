"""What `daily` does inside a game, registered with the hooks of `games` when the app is ready."""

from django.db.models import Q

from daily import services
from daily.errors import (
    AnalysisRefusedInRankedAttempt,
    AttemptExpired,
    HintsRefusedInRankedAttempt,
    LeaveRefusedInRankedAttempt,
)
from daily.selectors.game_checks import (
    expired_ranked_games,
    game_attempt,
    game_dealt_as_daily,
    game_hints_refused,
    game_moves_expired,
    game_seed_may_be_revealed,
    player_in_ranked_attempt,
)
from games.engine import State
from games.models import Game, Player


def record_ranked_finish(game: Game, state: State) -> None:
    services.attempt_hand_over(game=game, state=state)


def refuse_hints_in_ranked_attempt(game: Game) -> None:
    refuse_moves_after_finish_deadline(game)
    if game_hints_refused(game=game):
        raise HintsRefusedInRankedAttempt()


def refuse_analysis_in_ranked_attempt(player: Player) -> None:
    if player_in_ranked_attempt(player=player):
        raise AnalysisRefusedInRankedAttempt()


def refuse_leaving_a_ranked_attempt(game: Game) -> None:
    # Left, a computer would take the seat (and play on), and the attempt would be out of its player's reach
    # until its deadline, blocking another attempt and analysis: a ranked game is never left, finished or not.
    attempt = game_attempt(game=game)
    if attempt is not None and attempt.ranked:
        raise LeaveRefusedInRankedAttempt()


def plain_placement_in_ranked_attempt(game: Game) -> bool:
    # Where hints are refused, sharp does not place a card either.
    return game_hints_refused(game=game)


def dealt_as_daily(game: Game) -> bool:
    return game_dealt_as_daily(game=game)


def refuse_moves_after_finish_deadline(game: Game) -> None:
    if game_moves_expired(game=game):
        raise AttemptExpired()


def seed_revealed_once_day_is_over(game: Game) -> bool:
    return game_seed_may_be_revealed(game=game)


def expired_attempt_closed(game: Game) -> str | None:
    return "attempt_expired" if game_moves_expired(game=game) else None


def expired_attempts() -> Q:
    return expired_ranked_games()
