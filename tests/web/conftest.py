"""The web client's browser tests: one live server for the module's tests (the quick start's, uvicorn), one
chromium, and a person per browser context, each on a desktop and a phone-sized screen."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize

from tests.support.browser import artifact_path, chromium
from tests.support.live_api import live_server
from tests.support.stack import Stack
from tests.support.web_pages import Recorder, assert_no_foreign_cards

STREAM_TICKET_SECONDS = 10
SCREENS: dict[str, ViewportSize] = {
    "desktop": {"width": 1280, "height": 900},
    "phone": {"width": 360, "height": 740},
}


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # A finishing grace just under nothing: yesterday's seed is revealed (its par can be worked out and
    # replayed) while today's ranked attempts stay open until a minute before midnight.
    # The test passes each API request on itself (tests/support/web_pages.py Recorder), on connections it
    # keeps alive: uvicorn keeps them for minutes rather than 5 s, so that one is rarely closed under it.
    # Stream tickets last 10 s, so that a test can outlive one (tests/web/test_streams.py).
    env = {
        "DAILY_FINISH_GRACE_SECONDS": "-60",
        "STREAM_HEARTBEAT_SECONDS": "5",
        "STREAM_TICKET_SECONDS": str(STREAM_TICKET_SECONDS),
        "UVICORN_TIMEOUT_KEEP_ALIVE": "300",
    }
    with live_server(tmp_path_factory.mktemp("web-server"), suffix="web", extra_env=env) as stack:
        yield stack


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture(params=sorted(SCREENS))
def screen(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@dataclass
class Person:
    """One person's browser: a context of its own (its own localStorage, so its own token), one page, and
    everything the page received."""

    context: BrowserContext
    page: Page
    recorder: Recorder
    base_url: str

    def token(self) -> str:
        token = self.page.evaluate("() => localStorage.getItem('kingscorner.token')")
        assert isinstance(token, str) and token.startswith("kc_"), token
        return token

    def clipboard(self) -> str:
        text: Any = self.page.evaluate("() => navigator.clipboard.readText()")
        return str(text)


@pytest.fixture
def people(web_server: Stack, browser: Browser, screen: str, shots: str) -> Iterator[Callable[[], Person]]:
    """Makes people, each with a browser context of its own at the test's screen size; when the test ends,
    saves each page as it was last (zz-last-<n>) and checks that nothing any of them received held another
    person's cards."""
    made: list[Person] = []

    def person() -> Person:
        context = browser.new_context(viewport=SCREENS[screen], base_url=web_server.base_url)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=web_server.base_url)
        context.set_default_timeout(30_000)
        recorder = Recorder(context)
        page = recorder.watch(context.new_page())
        made.append(Person(context=context, page=page, recorder=recorder, base_url=web_server.base_url))
        return made[-1]

    yield person
    try:
        for number, someone in enumerate(made):
            if not someone.page.url.startswith(web_server.base_url):
                continue
            someone.page.screenshot(path=artifact_path(shots, f"zz-last-{number}"), full_page=True)
            token = someone.page.evaluate("() => localStorage.getItem('kingscorner.token')")
            if token:
                assert assert_no_foreign_cards(
                    someone.recorder, web_server.base_url, token, web_server.env["DATABASE_URL"]
                )
    finally:
        for someone in made:
            someone.context.close()


@pytest.fixture
def shots(request: pytest.FixtureRequest) -> str:
    """The folder of the test's screenshots: its name with the screen (test_daily-phone)."""
    return str(request.node.name).replace("[", "-").rstrip("]")
