"""When a day's seed, and everything that depends on it (par included), may be shown."""

from daily import clock
from daily.models import DailyDeal


def daily_deal_seed_revealed(*, deal: DailyDeal) -> bool:
    """A deal's seed is public once its day is over for the leaderboard: at its finishing deadline, after
    which no ranked attempt at it can be played on."""
    return clock.is_over(deal.date)
