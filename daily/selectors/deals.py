"""A day's deal as the API shows it, and when its seed is revealed."""

from collections.abc import Iterable
from datetime import date

from daily import clock, persistence
from daily.models import Attempt, DailyDeal, Submission
from daily.selectors.leaderboard import submission_standing
from daily.selectors.par import daily_par_view
from daily.selectors.reveal import daily_deal_seed_revealed
from daily.selectors.submissions import player_submission
from daily.shapes import DealView
from games.models import Player


def daily_deal_view(*, deal: DailyDeal, player: Player | None) -> DealView:
    view: DealView = {
        "date": deal.date,
        "number": deal.number,
        "rules": deal.rules,
        "opponents": [
            {"seat": seat, "name": opponent["name"], "level": opponent["level"]}
            for seat, opponent in enumerate(deal.opponents, start=1)
        ],
        "commitment": deal.commitment,
        "seed": deal.seed if daily_deal_seed_revealed(deal=deal) else None,
        "seed_revealed_at": clock.finish_deadline(deal.date),
        "next_deal_in": clock.seconds_until_next_day(),
        "par": daily_par_view(deal=deal),
    }
    if player is not None:
        attempts = Attempt.objects.filter(player=player, deal=deal).order_by("started_at", "id")
        _with_attempts(view, attempts)
        _with_result(view, player_submission(player=player, deal=deal), deal)
    return view


def daily_deal_view_of_day(*, day: date, player: Player) -> DealView | None:
    """daily_deal_view of the deal of `day`, a day that has started, for the player, read with the player's
    attempts and recorded submission in one statement (daily.persistence.deal_with_player); None while the
    deal is not made (the service makes it)."""
    read = persistence.deal_with_player(day=day, player=player)
    if read is None:
        return None
    view = daily_deal_view(deal=read.deal, player=None)
    _with_attempts(view, read.attempts)
    submission = read.submission
    if submission is None and read.deal.date <= clock.last_day_over():
        # Past the deadline, a ranked attempt left unfinished shows as closed (player_submission).
        submission = player_submission(player=player, deal=read.deal)
    _with_result(view, submission, read.deal)
    return view


def _with_attempts(view: DealView, attempts: Iterable[Attempt | persistence.AttemptSummary]) -> None:
    view["attempts"] = [
        {
            "id": attempt.public_id,
            "game_id": attempt.game_id,
            "ranked": attempt.ranked,
            "started_at": attempt.started_at,
        }
        for attempt in attempts
    ]


def _with_result(view: DealView, submission: Submission | None, deal: DailyDeal) -> None:
    view["result"] = None if submission is None else submission_standing(submission=submission, deal=deal)
