"""A live server for the tests of what ships for users (the README's walkthrough, the daily verifier): the
quick start's server (tests/support/live_api.py), on a database of its own."""

from collections.abc import Iterator

import pytest
from django.conf import settings

from tests.support.live_api import live_server
from tests.support.stack import Stack


@pytest.fixture(scope="session")
def live_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # The quick start's daily: its secret unset (the development default), so the walkthrough's outputs are
    # those of any quick-start server.
    extra_env = {"DAILY_SECRET": settings.DAILY_SECRET_DEVELOPMENT_DEFAULT}
    with live_server(tmp_path_factory.mktemp("live-server"), extra_env=extra_env) as stack:
        yield stack
