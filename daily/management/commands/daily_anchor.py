"""`manage.py daily_anchor`: prints the anchor of the current season and of the next, to publish at deploy
time, and checks that every stored deal of those seasons has the seed its date's place on the chain gives."""

from datetime import date, timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from daily import clock
from daily.models import DailyDeal
from daily.seasons import Season, day_seed, first_season, season_anchor, season_of


class Command(BaseCommand):
    help = (
        "Print the daily seeds' anchor of the season of today (or of --date) and of the season after it; "
        "fail if a stored deal of those seasons has another seed than the chain gives."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--date", dest="day", metavar="YYYY-MM-DD", help="a day of the season wanted; today by default"
        )

    def handle(self, *args: Any, day: str | None, **options: Any) -> None:
        try:
            wanted = clock.today() if day is None else date.fromisoformat(day)
        except ValueError as error:
            raise CommandError(f"a day is written YYYY-MM-DD: {error}") from error
        season = season_of(wanted) or first_season()
        following = Season(season.last_day + timedelta(days=1), season.days)
        for shown in (season, following):
            self.stdout.write(
                f"season_start {shown.start.isoformat()} days {shown.days} last_day "
                f"{shown.last_day.isoformat()} anchor {season_anchor(shown).hex()}"
            )
        stored = DailyDeal.objects.filter(date__range=(season.start, following.last_day)).order_by("date")
        wrong = [deal.date for deal in stored if deal.seed != day_seed(deal.date).hex()]
        if wrong:
            days = ", ".join(wrong_day.isoformat() for wrong_day in wrong[:10])
            raise CommandError(
                f"{len(wrong)} stored deal(s) of these seasons have another seed than the chain gives ({days}"
                f"{', ...' if len(wrong) > 10 else ''}): set DAILY_SEASON_START after the last deal dealt "
                "before the chain, or restore the secret they were dealt with."
            )
