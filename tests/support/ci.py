"""Whether the run is CI's, read once from the environment: under CI (or REQUIRE_POSTGRES) tests that need
PostgreSQL, Redis, nginx or Node fail rather than skip."""

import os


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in {"", "0", "false", "no"}


IN_CI = _flag("CI")
POSTGRES_REQUIRED = IN_CI or _flag("REQUIRE_POSTGRES")


def needs_redis() -> None:
    """Skips a test that needs Redis when REDIS_URL is unset, and fails it under CI."""
    import pytest
    from django.conf import settings

    if not settings.REDIS_URL:
        if IN_CI:
            pytest.fail("CI is set but REDIS_URL is not", pytrace=False)
        pytest.skip("needs REDIS_URL")
