"""Live play in real browsers, as a third party's page would do it: Debian's chromium (through Playwright),
one browser context a person, on a plain page of another origin (tests/browser/page/, served by a local
http.server) that asks the API for stream tickets with `fetch` and opens `new EventSource(url)` on the person
stream and on the game stream, and nothing more: it never reopens a stream itself. Behind it, the production
topology started without Docker: nginx (deploy/nginx.conf.template) in front of gunicorn and uvicorn, a Celery
worker and beat, on PostgreSQL and Redis.

One table from its creation to its rematch: the stream server is restarted in the middle of the game, one page
loses its network for longer than a minute, and each page still receives every event once, in order; the
rematch reaches the other page by its streams; nothing of the other person's hand ever reaches a page."""

import functools
import http.server
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from playwright.sync_api import Browser, BrowserContext, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from games.apis.serializers import EVENT_SERIALIZERS
from tests.support.browser import artifact_path, chromium
from tests.support.ci import IN_CI
from tests.support.games import whole_turn
from tests.support.relay import Relay
from tests.support.stack import Proxy, Stack, call, database_create, database_drop, free_port, nginx_binary
from tests.support.web_pages import Received, Truth, foreign_cards, game_truth

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SERVER_URL = os.environ.get("E2E_DATABASE_SERVER_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_SERVER = os.environ.get("E2E_REDIS_URL", "redis://127.0.0.1:6379")
# Databases of their own: the e2e tests use 8 to 14; a stock Redis has 16.
BROKER_URL = f"{REDIS_SERVER}/6"
CACHE_URL = f"{REDIS_SERVER}/7"
PAGE = Path(__file__).resolve().parent / "page"
# Longer than a stream ticket used to last (60 s): the page's EventSource reconnects after it with the URL,
# and so the ticket, it was given at the start.
OFFLINE_SECONDS = 65
# Waiting for what the services and the pages do; never a figure the test checks.
PATIENCE_MS = 30_000
PERSON_EVENTS = [
    "seat_taken",
    "seat_left",
    "game_started",
    "your_turn",
    "game_over",
    "rematch",
    "invitation_revoked",
    "seat_replaced",
    "daily_deal",
    "daily_revealed",
    "daily_par",
    "daily_closed",
    "resync",
]
GAME_EVENTS = sorted({*EVENT_SERIALIZERS, "rematch"})


@dataclass
class Service:
    stack: Stack
    proxy: Proxy
    page_url: str

    @property
    def api_url(self) -> str:
        return self.proxy.base_url


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    if nginx_binary() is None:
        message = "needs nginx (Debian: apt-get install nginx); .ci/run installs it"
        if IN_CI:
            pytest.fail(f"CI is set but nginx is missing: {message}", pytrace=False)
        pytest.skip(message)
    name = f"kingscorner_live_play_{uuid.uuid4().hex[:12]}"
    for url in (BROKER_URL, CACHE_URL):
        redis.Redis.from_url(url).flushdb()
    stack = Stack(
        database_url=database_create(SERVER_URL, name, fresh=True),
        broker_url=BROKER_URL,
        cache_url=CACHE_URL,
        # The API allows every origin (CORS_ALLOWED_ORIGINS' default), the page's included.
        extra_env={"NUM_PROXIES": "1"},
    )
    # The page's origin: another port than the API's.
    pages = http.server.ThreadingHTTPServer(
        ("127.0.0.1", free_port()), functools.partial(_QuietHandler, directory=str(PAGE))
    )
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    proxy: Proxy | None = None
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=2)
        stack.start_stream()
        stack.start_worker()
        stack.start_beat()
        proxy = Proxy(upstream=f"127.0.0.1:{stack.port}", stream_upstream=f"127.0.0.1:{stack.stream_port}")
        proxy.start()
        yield Service(stack=stack, proxy=proxy, page_url=f"http://127.0.0.1:{pages.server_port}/index.html")
    finally:
        pages.shutdown()
        pages.server_close()
        if proxy is not None:
            proxy.close()
        stack.close()
        database_drop(SERVER_URL, name)
        shutil.rmtree(stack.logs, ignore_errors=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@dataclass
class Person:
    name: str
    token: str
    context: BrowserContext
    page: Page

    def received(self, stream: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.page.evaluate(
            "stream => kc.received.filter(item => item.stream === stream)", stream
        )
        return items

    def opened(self, stream: str) -> int:
        count: int = self.page.evaluate(
            "stream => kc.opened.filter(item => item.stream === stream).length", stream
        )
        return count

    def wait_for(self, stream: str, condition: str, arg: Any = None) -> None:
        """Waits until `condition`, a JavaScript expression of `items` (what `stream` received) and `arg`,
        holds on the page."""
        try:
            self.page.wait_for_function(
                f"([stream, arg]) => {{ const items = kc.received.filter(item => item.stream === stream); "
                f"return {condition}; }}",
                arg=[stream, arg],
                timeout=PATIENCE_MS,
            )
        except PlaywrightTimeoutError:
            seen: Any = self.page.evaluate(
                "stream => ({last: kc.received.filter(item => item.stream === stream).slice(-3), "
                "errors: kc.errors.filter(item => item.stream === stream).length, "
                "state: kc.sources[stream] && kc.sources[stream].readyState})",
                stream,
            )
            pytest.fail(f"{self.name}'s {stream} never had {condition} ({arg}): {seen}")

    def wait_for_event(self, stream: str, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        """The first event of type `kind` on `stream` whose data holds `data`, once it has arrived."""
        condition = (
            "items.some(item => item.type === arg.kind && "
            "Object.entries(arg.data).every(([key, value]) => item.data[key] === value))"
        )
        self.wait_for(stream, condition, {"kind": kind, "data": data})
        return next(
            item
            for item in self.received(stream)
            if item["type"] == kind and all(item["data"].get(key) == value for key, value in data.items())
        )

    def wait_for_seq(self, stream: str, seq: int) -> None:
        self.wait_for(stream, "items.some(item => Number(item.id) >= arg)", seq)


def _api(service: Service, method: str, path: str, body: Any = None, token: str = "") -> Any:
    status, data, _ = call(service.proxy.port, method, f"/api/v1/{path}", body, token)
    assert status in (200, 201), (method, path, status, data)
    return data


def _person(service: Service, browser: Browser, name: str, api_url: str) -> Person:
    """A person with a browser context of their own, their page open on its origin, reaching the API at
    `api_url` (nginx, or a relay in front of it that stands for their network)."""
    token = _api(service, "POST", "players", {"name": name})["token"]
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.goto(service.page_url)
    page.evaluate(
        "args => startPerson(args)",
        {"api": api_url, "token": token, "name": name, "types": PERSON_EVENTS},
    )
    person = Person(name=name, token=token, context=context, page=page)
    page.wait_for_function("() => kc.opened.some(item => item.stream === 'person')", timeout=PATIENCE_MS)
    return person


def _game_stream(game_id: str) -> str:
    return f"game:{game_id}"


def _log(service: Service, game_id: str, token: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        page = _api(service, "GET", f"games/{game_id}/events?after={after}&limit=1000", token=token)
        events += page["items"]
        after = page["more_after"]
        if page["next"] is None:
            return events


def _turn(service: Service, people: list[Person], game_id: str, *, whole: bool) -> dict[str, Any]:
    """The seat to move plays its turn through the API: sharp's whole turn, or one card (when it has one
    to play) and the end of its turn. Returns the view after it."""
    view = _api(service, "GET", f"games/{game_id}", token=people[0].token)
    assert view["status"] == "playing", view["status"]
    mover = people[view["current_seat"]]
    view = _api(service, "GET", f"games/{game_id}", token=mover.token)
    plays = [move for move in view["legal_moves"] if move["type"] == "play"]
    if whole or len(view["hand"]) <= 2:
        moves = whole_turn(view)
    else:
        moves = [*plays[:1], {"type": "end_turn"}]
    body = {"moves": moves, "expected_version": view["version"]}
    return dict(_api(service, "POST", f"games/{game_id}/moves", body, mover.token))


def _caught_up(service: Service, people: list[Person], game_id: str) -> list[dict[str, Any]]:
    """Waits until each page's game stream has every event of the log, and each person stream the
    `your_turn` of every turn of its seat; returns the log."""
    log = _log(service, game_id, people[0].token)
    for seat, person in enumerate(people):
        person.wait_for_seq(_game_stream(game_id), log[-1]["seq"])
        turns = sum(1 for event in log if event["type"] == "turn_start" and event["seat"] == seat)
        person.wait_for(
            "person",
            "items.filter(item => item.type === 'your_turn' && item.data.game === arg.game).length"
            " >= arg.turns",
            {"game": game_id, "turns": turns},
        )
    return log


def _no_foreign_cards(service: Service, person: Person, game_id: str, seat: int) -> None:
    """Everything the page received (both streams), checked against what each seat held (the log and, for
    the hand in play, the database): only its own cards, and no other seat's draw, ever."""
    streams = {
        _game_stream(game_id): f"{service.api_url}/api/v1/games/{game_id}/stream",
        "person": f"{service.api_url}/api/v1/players/me/stream",
    }
    received = [
        Received(url=url, body=item["data"], event=item["type"])
        for stream, url in streams.items()
        for item in person.received(stream)
    ]
    truths: dict[str, Truth] = {
        game_id: game_truth(_log(service, game_id, person.token), service.stack.env["DATABASE_URL"], game_id)
    }
    assert foreign_cards(received, {game_id: seat}, truths) == []


@pytest.mark.timeout(420)
def test_two_people_play_on_another_origin_through_restarts_and_a_network_drop_to_a_rematch(
    service: Service, browser: Browser
) -> None:
    started = time.monotonic()
    # Eve's network: a relay the test can cut, as her browser goes offline.
    network = Relay(service.proxy.port)
    ada = _person(service, browser, "Ada", service.api_url)
    eve = _person(service, browser, "Eve", network.base_url)
    people = [ada, eve]
    try:
        # Ada's table, for two people; Eve joins it by its invitation, and it starts.
        seats = [{"kind": "person"}, {"kind": "person"}]
        table = _api(service, "POST", "games", {"seats": seats, "target_score": None}, ada.token)
        game_id = table["id"]
        stream = _game_stream(game_id)
        ada.page.evaluate("args => openGame(args)", {"game": game_id, "types": GAME_EVENTS})
        _api(service, "POST", f"invitations/{table['invitation']['code']}", token=eve.token)
        eve.page.evaluate("args => openGame(args)", {"game": game_id, "types": GAME_EVENTS})
        ada.wait_for_event("person", "seat_taken", {"game": game_id, "seat": 1})
        for person in people:
            person.wait_for_event("person", "game_started", {"game": game_id})
            person.wait_for_event(stream, "game_started", {})
        _turn(service, people, game_id, whole=False)
        _turn(service, people, game_id, whole=False)
        _caught_up(service, people, game_id)
        opened_before = [person.opened(name) for person in people for name in ("person", stream)]

        # The stream server restarts in the middle of the game; a turn is played while it is down.
        service.stack.stop("stream")
        _turn(service, people, game_id, whole=False)
        service.stack.start_stream(port=service.stack.stream_port)
        _turn(service, people, game_id, whole=False)
        _caught_up(service, people, game_id)
        # Each stream was opened again, by EventSource itself.
        opened_after = [person.opened(name) for person in people for name in ("person", stream)]
        assert all(after > before for before, after in zip(opened_before, opened_after, strict=True))
        ada.page.screenshot(path=artifact_path("test_live_play", "ada-after-restart"), full_page=True)

        # Eve's network drops for longer than a ticket used to last; the game goes on meanwhile.
        eve_opened = [eve.opened("person"), eve.opened(stream)]
        eve.context.set_offline(True)
        network.cut()
        offline_at = time.monotonic()
        _turn(service, people, game_id, whole=False)
        _turn(service, people, game_id, whole=False)
        time.sleep(max(0.0, OFFLINE_SECONDS - (time.monotonic() - offline_at)))
        network.restore()
        eve.context.set_offline(False)
        _caught_up(service, people, game_id)
        assert [eve.opened("person"), eve.opened(stream)] > eve_opened
        assert eve.opened("person") > eve_opened[0] and eve.opened(stream) > eve_opened[1]

        # To the end of the game, then Ada's rematch, which reaches Eve's page on both its streams.
        view: dict[str, Any] = {"status": "playing"}
        for _ in range(200):
            view = _turn(service, people, game_id, whole=True)
            if view["status"] != "playing":
                break
        assert view["status"] == "finished", view["status"]
        for person in people:
            person.wait_for_event(stream, "game_over", {})
            person.wait_for_event("person", "game_over", {"game": game_id})
        rematch = _api(service, "POST", f"games/{game_id}/rematch", token=ada.token)
        eve.wait_for_event("person", "rematch", {"game": game_id, "new_game": rematch["id"]})
        eve.wait_for_event(stream, "rematch", {"new_game": rematch["id"]})
        for person in people:
            person.page.screenshot(
                path=artifact_path("test_live_play", f"{person.name.lower()}-rematch"), full_page=True
            )

        log = _log(service, game_id, ada.token)
        for seat, person in enumerate(people):
            # The game stream is the log, each event once and in order, across the restart and the drop.
            got = person.received(stream)
            assert [int(item["id"]) for item in got] == [event["seq"] for event in log]
            assert [item["data"] for item in got] == _log(service, game_id, person.token)
            # The person stream: its own ids, 1, 2, 3, … with no gap and no duplicate.
            mine = person.received("person")
            ids = [int(item["id"]) for item in mine]
            assert ids == list(range(1, len(ids) + 1)), ids
            assert [item["data"]["seq"] for item in mine] == ids
            turns = [event for event in log if event["type"] == "turn_start" and event["seat"] == seat]
            # A `your_turn` for each turn of the person's seat, once (and then the rematch's own).
            your_turns = [item["data"] for item in mine if item["type"] == "your_turn"]
            assert [data["seat"] for data in your_turns if data["game"] == game_id] == [seat] * len(turns)
            assert {data["game"] for data in your_turns} <= {game_id, rematch["id"]}
            _no_foreign_cards(service, person, game_id, seat)
        print(f"\nlive play: {len(log)} game events, {time.monotonic() - started:.0f} s")
    finally:
        for person in people:
            person.context.close()
        network.close()
