"""`python manage.py simulate`: computer levels against each other (games.engine.players.simulate)."""

from argparse import ArgumentParser
from typing import Any, TextIO, cast

from django.core.management.base import BaseCommand, CommandError

from games.engine.players import simulate


class Command(BaseCommand):
    help = "Plays single hands between computer levels and prints win rates, penalties and decision times."

    def add_arguments(self, parser: ArgumentParser) -> None:
        simulate.add_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        # The progress bar redraws one line in place, and the report brings its own line ends.
        self.stdout.ending = self.stderr.ending = ""
        try:
            # Django's OutputWrapper writes and flushes as the text stream the engine's runner expects.
            simulate.run(options, cast(TextIO, self.stdout), cast(TextIO, self.stderr))
        except ValueError as error:
            raise CommandError(str(error)) from error
