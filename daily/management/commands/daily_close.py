"""`manage.py daily_close`: closes the ranked attempts left unfinished at their day's finishing deadline, as
the beat job does, with a report of each batch."""

import json
import time
from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper

from daily import clock, services
from daily.models import DailyDeal


class BatchTimer:
    """Times each batch of one day's close, and shows the running total when `progress` is given."""

    def __init__(self, day: date, progress: OutputWrapper | None) -> None:
        self.day = day
        self.progress = progress
        self.batches: list[dict[str, float]] = []
        self.started = self.last = time.perf_counter()

    def __call__(self, closed: int) -> None:
        now = time.perf_counter()
        self.batches.append({"closed": closed, "seconds": round(now - self.last, 4)})
        self.last = now
        if self.progress is not None:
            total = sum(batch["closed"] for batch in self.batches)
            self.progress.write(f"\r{self.day.isoformat()}: {total:,} closed")
            self.progress.flush()

    def seconds(self) -> float:
        return time.perf_counter() - self.started


class Command(BaseCommand):
    help = (
        "Close the ranked attempts left unfinished at the finishing deadline: of every day past it that is "
        "not closed yet, as the beat job does, or of one day. Safe to run beside the job."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--date", metavar="YYYY-MM-DD", help="close this day only")
        parser.add_argument(
            "--batch-size", type=int, default=services.CLOSE_BATCH_SIZE, help="attempts per transaction"
        )
        parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch_size"] < 1:
            raise CommandError("--batch-size is at least 1")
        deals = DailyDeal.objects.filter(attempts_closed_at__isnull=True, date__lte=clock.last_day_over())
        if options["date"] is not None:
            try:
                day = date.fromisoformat(options["date"])
            except ValueError as error:
                raise CommandError(f"a day is written YYYY-MM-DD: {error}") from error
            if not clock.is_over(day):
                raise CommandError(f"{day.isoformat()} is not over until {clock.finish_deadline(day)}")
            deals = deals.filter(date=day)
        report: dict[str, Any] = {}
        for deal in deals.order_by("date"):
            timer = BatchTimer(deal.date, None if options["json"] else self.stdout)
            closed = services.daily_deal_close(deal=deal, batch_size=options["batch_size"], on_batch=timer)
            report[deal.date.isoformat()] = {
                "closed": closed,
                "seconds": round(timer.seconds(), 3),
                "batches": timer.batches,
            }
            if not options["json"]:
                self.stdout.write(f"\r{deal.date.isoformat()}: {closed:,} closed in {timer.seconds():.1f} s")
        if options["json"]:
            self.stdout.write(json.dumps(report))
        elif not report:
            self.stdout.write("No day is due for closing.")
