"""`manage.py daily_par`: computes the par of revealed days on demand, as the beat job does, with a progress
bar on stderr."""

import time
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from daily import clock, services

BAR_WIDTH = 30


def progress_bar(done: int, total: int, label: str) -> str:
    filled = BAR_WIDTH * done // total
    return f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} {label}"


class Command(BaseCommand):
    help = (
        "Compute the daily par of one revealed day (--date) or of the last N revealed days (--days) where "
        "it is missing, or search again with --again (the better par is kept). Safe beside the job."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--date", metavar="YYYY-MM-DD", help="this day, whose seed must be revealed")
        which.add_argument("--days", type=int, metavar="N", help="the last N days whose seed is revealed")
        parser.add_argument(
            "--node-budget", type=int, default=None, help="the search's budget of nodes per day"
        )
        parser.add_argument(
            "--again", action="store_true", help="search days that have a par again; keep the better"
        )

    def _days(self, options: dict[str, Any]) -> list[date]:
        if options["date"] is not None:
            try:
                day = date.fromisoformat(options["date"])
            except ValueError as error:
                raise CommandError(f"a day is written YYYY-MM-DD: {error}") from error
            if not clock.is_over(day):
                raise CommandError(
                    f"the seed of {day.isoformat()} is not revealed until "
                    f"{clock.finish_deadline(day).isoformat()}: its par is not computed before"
                )
            if day < settings.DAILY_EPOCH:
                raise CommandError(f"the first daily deal is that of {settings.DAILY_EPOCH.isoformat()}")
            return [day]
        if options["days"] < 1:
            raise CommandError("--days is at least 1")
        last = clock.last_day_over()
        days = [last - timedelta(days=offset) for offset in range(options["days"])]
        return [day for day in days if day >= settings.DAILY_EPOCH]

    def handle(self, *args: Any, **options: Any) -> None:
        if options["node_budget"] is not None and options["node_budget"] < 1:
            raise CommandError("--node-budget is at least 1")
        days = self._days(options)
        for done, day in enumerate(days):
            bar = progress_bar(done, len(days), day.isoformat())
            self.stderr.write(bar, ending="")
            self.stderr.flush()
            started = time.perf_counter()
            deal = services.daily_deal_get_or_create(day=day)
            par = services.daily_par_compute(
                deal=deal, node_budget=options["node_budget"], again=options["again"]
            )
            seconds = time.perf_counter() - started
            if par is None:
                line = "held by another worker, or its close is in progress; try again"
            else:
                line = (
                    f"par {par.result:+d} in {par.turns} turns ({par.method}; search {par.search_result:+d} "
                    f"with {par.nodes:,} of {par.node_budget:,} nodes; {seconds:.1f} s)"
                )
            # The bar's line is cleared so that, on one terminal, each day's line stands on its own.
            self.stderr.write("\r" + " " * len(bar) + "\r", ending="")
            self.stdout.write(f"{day.isoformat()}: {line}")
        self.stderr.write(progress_bar(len(days), len(days), "days"))
