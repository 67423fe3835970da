"""The checks `games` asks of a game through its hooks: is it a daily attempt, may it show its seed, take
hints or moves, and which games are closed."""

from typing import Any

from django.db.models import Q, QuerySet

from daily import clock
from daily.models import Attempt, DailyDeal
from daily.selectors.reveal import daily_deal_seed_revealed
from games.engine import DIRECT, PLAYING
from games.models import Game, Player


def _dealt_as_daily(game: Game) -> bool:
    """Only daily attempts deal a game straight from its seed, so any other game needs no look-up: the
    moves of every game pass the daily hooks, and most games are not daily ones."""
    return bool(game.state.get("seed_scheme") == DIRECT)


def game_dealt_as_daily(*, game: Game) -> bool:
    """Whether the game may be a daily attempt (no query: from its state)."""
    return _dealt_as_daily(game)


def game_attempt(*, game: Game) -> Attempt | None:
    """The daily attempt the game is played for, with its deal; None for any other game."""
    if not _dealt_as_daily(game):
        return None
    return Attempt.objects.filter(game=game).select_related("deal").first()


def game_seed_may_be_revealed(*, game: Game) -> bool:
    """A daily game shows its seed only once its deal's day is over for the leaderboard."""
    attempt = game_attempt(game=game)
    return attempt is None or daily_deal_seed_revealed(deal=attempt.deal)


def _open_ranked_attempts(*, player_id: Any) -> QuerySet[Attempt]:
    """The player's ranked attempts that may still be finished: none recorded, the day not over."""
    return Attempt.objects.filter(
        player_id=player_id, ranked=True, submission__isnull=True, deal__date__gt=clock.last_day_over()
    )


def ranked_attempt_open(*, player: Player, deal: DailyDeal) -> bool:
    """Whether the player's ranked attempt at the deal is unfinished and may still be finished."""
    return _open_ranked_attempts(player_id=player.pk).filter(deal=deal).exists()


def player_in_ranked_attempt(*, player: Player) -> bool:
    """Whether any ranked attempt of the player's is unfinished and may still be finished."""
    return _open_ranked_attempts(player_id=player.pk).exists()


def game_hints_refused(*, game: Game) -> bool:
    """Hints are refused while the player's ranked attempt at the game's deal is open: in the ranked game
    itself and in any other game at the same deal beside it."""
    attempt = game_attempt(game=game)
    if attempt is None or clock.is_over(attempt.deal.date):
        return False
    return Attempt.objects.filter(
        player_id=attempt.player_id, deal_id=attempt.deal_id, ranked=True, submission__isnull=True
    ).exists()


def game_moves_expired(*, game: Game) -> bool:
    """A ranked daily game still in play after its deal's finishing deadline takes no more moves: the
    attempt is closed as it stood at the deadline."""
    if game.status != PLAYING:
        return False
    attempt = game_attempt(game=game)
    return attempt is not None and attempt.ranked and clock.is_over(attempt.deal.date)


def expired_ranked_games() -> Q:
    """As a filter on games: the ranked daily games still in play past their day's finishing deadline."""
    return Q(
        status=Game.Status.PLAYING,
        daily_attempt__ranked=True,
        daily_attempt__deal__date__lte=clock.last_day_over(),
    )
