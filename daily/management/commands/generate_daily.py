"""`manage.py generate_daily`: creates today's and tomorrow's deals, as the beat job does, or given days."""

from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from daily import services
from daily.errors import NoDailyDeal


class Command(BaseCommand):
    help = "Create today's and tomorrow's daily deals (or those of the given days); existing ones are kept."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("days", nargs="*", metavar="YYYY-MM-DD", help="days to create instead")

    def handle(self, *args: Any, days: list[str], **options: Any) -> None:
        try:
            wanted = [date.fromisoformat(day) for day in days]
        except ValueError as error:
            raise CommandError(f"a day is written YYYY-MM-DD: {error}") from error
        if wanted:
            try:
                deals = [services.daily_deal_get_or_create(day=day) for day in wanted]
            except NoDailyDeal as error:
                raise CommandError(error.detail) from error
        else:
            deals = services.daily_deals_create_upcoming()
        for deal in deals:
            self.stdout.write(f"Daily #{deal.number} {deal.date.isoformat()} commitment {deal.commitment}")
