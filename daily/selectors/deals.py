"""A day's deal as the API shows it, and when its seed is revealed."""

from daily import clock
from daily.models import Attempt, DailyDeal
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
        attempts = Attempt.objects.filter(player=player, deal=deal)
        view["attempts"] = [
            {
                "id": attempt.public_id,
                "game_id": attempt.game_id,
                "ranked": attempt.ranked,
                "started_at": attempt.started_at,
            }
            for attempt in attempts.order_by("started_at", "id")
        ]
        submission = player_submission(player=player, deal=deal)
        view["result"] = None if submission is None else submission_standing(submission=submission)
    return view
