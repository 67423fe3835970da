"""The Django app configuration of `games`."""

from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
