"""The API's rate limits: per client address without a token, per player with one, read at request time."""

from rest_framework import throttling
from rest_framework.settings import api_settings


class _RateFromSettings:
    """DRF reads throttle rates once, at import; these read them at each request, so settings changes
    (and tests) take effect."""

    scope: str | None

    def get_rate(self) -> str | None:
        rate = None if self.scope is None else api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        return rate if isinstance(rate, str) else None

    def wait(self) -> float | None:
        # DRF gives no wait when more requests are counted than the rate now allows (it was lowered): the
        # oldest counted request leaves the window then, which Retry-After can always name.
        wait: float | None = super().wait()  # type: ignore[misc]
        if wait is None and self.history:  # type: ignore[attr-defined]
            return float(self.duration - (self.now - self.history[-1]))  # type: ignore[attr-defined]
        return wait


class AddressRateThrottle(_RateFromSettings, throttling.AnonRateThrottle):
    """Requests without a token, counted per client address (RATE_LIMIT_ANON)."""


class PlayerRateThrottle(_RateFromSettings, throttling.UserRateThrottle):
    """Requests with a token, counted per player (RATE_LIMIT_USER)."""
