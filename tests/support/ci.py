"""Whether the run is CI's, read once from the environment: under CI (or REQUIRE_POSTGRES) tests that need
PostgreSQL, Redis, nginx or Node fail rather than skip."""

import os


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in {"", "0", "false", "no"}


IN_CI = _flag("CI")
POSTGRES_REQUIRED = IN_CI or _flag("REQUIRE_POSTGRES")
