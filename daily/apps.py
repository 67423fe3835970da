"""The Django app configuration of `daily`."""

from django.apps import AppConfig


class DailyConfig(AppConfig):
    name = "daily"
