"""The default cache on another Redis location (a closed port, a server that never answers), for
`with cache_at(url):`."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.test import override_settings


@contextmanager
def cache_at(url: str) -> Iterator[None]:
    with override_settings(
        CACHES={
            "default": {
                "BACKEND": "kingscorner.cache.FailOpenRedisCache",
                "LOCATION": url,
                "OPTIONS": settings.REDIS_CACHE_OPTIONS,
            }
        }
    ):
        yield
