"""The Django app configuration of `games`."""

from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"

    def ready(self) -> None:
        from games.engine import EngineError
        from kingscorner.domain import refusal_type_register

        # The engine's refusals (an illegal move, a card it cannot read) are answered with their code.
        refusal_type_register(EngineError)

        from kingscorner.database import deadlines_install

        deadlines_install()
