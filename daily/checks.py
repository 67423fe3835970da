"""Checks of `daily`: a guessable DAILY_SECRET would let anyone compute every future deal (deploy); a season
of daily seeds has at least one day."""

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register

MIN_SECRET_LENGTH = 32


@register(deploy=True)
def daily_secret_check(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    secret = settings.DAILY_SECRET
    if secret == settings.DAILY_SECRET_DEVELOPMENT_DEFAULT or len(secret) < MIN_SECRET_LENGTH:
        return [
            Warning(
                "DAILY_SECRET is the development default or shorter than "
                f"{MIN_SECRET_LENGTH} characters: anyone could compute the daily deals in advance.",
                hint="Set DAILY_SECRET to a long random string, kept as secret as SECRET_KEY.",
                id="daily.W001",
            )
        ]
    return []


@register()
def daily_season_check(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    if settings.DAILY_SEASON_DAYS < 1:
        return [
            Error(
                f"DAILY_SEASON_DAYS is {settings.DAILY_SEASON_DAYS}: a season has a day or more.",
                hint="Leave it at 3652 (ten years) unless an anchor was published for another length.",
                id="daily.E001",
            )
        ]
    return []
