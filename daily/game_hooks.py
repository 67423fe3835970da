"""What `daily` does inside a game, registered with the hooks of `games` when the app is ready."""

from django.db.models import Q

from daily import selectors, services
from games.engine import State
from games.models import Game
from kingscorner.errors import ApiProblem


def record_ranked_finish(game: Game, state: State) -> None:
    services.attempt_hand_over(game=game, state=state)


def refuse_hints_in_ranked_attempt(game: Game) -> None:
    refuse_moves_after_finish_deadline(game)
    if selectors.game_hints_refused(game=game):
        raise ApiProblem(
            status=403,
            code="hints_refused_in_ranked_attempt",
            detail="Hints are refused while your ranked attempt at this daily deal is unfinished.",
        )


def refuse_moves_after_finish_deadline(game: Game) -> None:
    if selectors.game_moves_expired(game=game):
        raise ApiProblem(
            status=409,
            code="attempt_expired",
            detail=(
                "This ranked daily attempt's finishing deadline has passed: it was closed as it stood then "
                "and takes no more moves."
            ),
        )


def seed_hidden_until_day_over(game: Game) -> bool:
    return selectors.game_seed_may_be_revealed(game=game)


def expired_attempt_closed(game: Game) -> str | None:
    return "attempt_expired" if selectors.game_moves_expired(game=game) else None


def expired_attempts() -> Q:
    return selectors.expired_ranked_games()
