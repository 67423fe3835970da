"""REST_FRAMEWORK settings with other rate limits, for `override_settings`."""

from typing import Any

from django.conf import settings


def rates(anon: str, user: str) -> dict[str, Any]:
    """The project's REST_FRAMEWORK settings with `anon` requests (per address) and `user` requests (per
    token) allowed, e.g. "2/min"."""
    return {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": anon, "user": user}}
