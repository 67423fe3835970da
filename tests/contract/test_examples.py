"""The schema's examples are real: captured again from the API, they are what
kingscorner/api/openapi_examples.json holds."""

import random
from datetime import datetime

import pytest

from daily import clock
from kingscorner.api.examples import EXAMPLES
from tests.contract.examples import capture, normalized, write


@pytest.mark.django_db
def test_the_schema_examples_are_what_the_api_answers(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    now: list[datetime] = []
    monkeypatch.setattr(clock, "now", lambda: now[-1])
    # The discriminators drawn for the examples' players, the same at every capture.
    monkeypatch.setattr("games.services.players._RANDOM", random.Random(4821))
    captured = capture(now.append)
    if request.config.getoption("--write-examples"):
        write(captured)
    assert normalized(captured) == normalized(EXAMPLES)
