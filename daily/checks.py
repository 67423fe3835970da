"""Deployment checks of `daily`: a guessable DAILY_SECRET would let anyone compute every future deal."""

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Warning, register

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
