"""`manage.py check --deploy --fail-level WARNING` passes under production settings, and fails under the
development defaults, which must never be deployed."""

import os
import subprocess
import sys

from tests.support.stack import ROOT

PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": "x7Qp2LrV9sKd4WnZ8tYb3HcJ6mFg1AeU5oRiPlXqTzNwSyDkEvBuCaMhGjOf0I",
    "DAILY_SECRET": "a-production-daily-secret-of-good-length-0123456789",
    "ALLOWED_HOSTS": "kingscorner.example",
    "SECURE_SSL_REDIRECT": "true",
    "SECURE_PROXY_SSL_HEADER": "true",
    "SESSION_COOKIE_SECURE": "true",
    "CSRF_COOKIE_SECURE": "true",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
}
DEVELOPMENT_KEYS = (*PRODUCTION, "DATABASE_URL")


def _check_deploy(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in DEVELOPMENT_KEYS} | extra
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_deploy_check_passes_under_production_settings() -> None:
    database = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    run = _check_deploy({**PRODUCTION, "DATABASE_URL": database})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "no issues" in run.stdout


def test_the_deploy_check_fails_under_the_development_defaults() -> None:
    run = _check_deploy({})
    assert run.returncode != 0
    assert "SECRET_KEY" in run.stderr + run.stdout


def test_the_deploy_check_refuses_a_guessable_daily_secret() -> None:
    database = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    run = _check_deploy({**PRODUCTION, "DATABASE_URL": database, "DAILY_SECRET": "short"})
    assert run.returncode != 0
    assert "daily.W001" in run.stderr + run.stdout
