"""examples/verify_daily.py loaded as a module (it is a script, not a package of the project), and what
tests need to run it against the API without a network: a fetch answered by Django's test client."""

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from rest_framework.test import APIClient

ROOT = Path(__file__).resolve().parents[2]
VERIFIER = ROOT / "examples" / "verify_daily.py"
BASE_URL = "http://testserver"


@cache
def verifier() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_daily", VERIFIER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def client_fetch(client: APIClient) -> Any:
    """The verifier's fetch, answered through `client` from the test database: a refusal is its
    Unverifiable, as an HTTP error is."""
    module = verifier()

    def fetch(url: str, token: str | None = None) -> Any:
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        if token:
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        else:
            client.credentials()
        response = client.get(target)
        if response.status_code != 200:
            raise module.Unverifiable(
                f"GET {url} answered {response.status_code}: {response.content[:300]!r}"
            )
        return response.json()

    return fetch
