"""What the web client's browser tests read and do on a page: every API answer and stream event a person's
browser received (Playwright's response events and the DevTools protocol's EventSource messages), the check
that none of it held another person's cards, axe-core's accessibility audit (from npm, pinned, injected by the
test: the pages never ship it), and a person's moves at the table, by clicks or by keys alone."""

import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from playwright.sync_api import BrowserContext, Page, Route
from playwright.sync_api import Error as PlaywrightError

from tests.support.browser import artifact_path

AXE_VERSION = "4.14.1"
CARD = re.compile(r"^[2-9TJQKA][CDHS]$")
GAME_PATH = re.compile(r"/api/v1/games/([0-9a-f-]{36})(?:/([a-z-]+))?")
STREAM_PATH = re.compile(r"/api/v1/(?:games/[^/]+|players/me)/stream$")
# Waiting for what the server and the page do; never a figure a test checks.
PATIENCE_MS = 30_000


@dataclass
class Received:
    """One thing the page got from the API: a JSON answer, or an event of a stream."""

    url: str
    body: Any
    event: str | None = None

    @property
    def game(self) -> str | None:
        match = GAME_PATH.search(urlsplit(self.url).path)
        return match.group(1) if match else None

    @property
    def resource(self) -> str | None:
        match = GAME_PATH.search(urlsplit(self.url).path)
        return match.group(2) if match else None


@dataclass
class Recorder:
    """Everything one person's browser context received from the API, read as it arrives: each JSON answer
    and each stream event."""

    context: BrowserContext
    received: list[Received] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    _streams: dict[str, str] = field(default_factory=dict)
    _sessions: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Each API request is passed on by the test, which reads the answer before the page does: an answer
        # the page navigates away after (a new game, a join) would be gone by the time a response event
        # asked for its body. Streams pass straight through; their events are read from the DevTools
        # protocol (watch).
        self.context.route(re.compile(r"/api/v1/"), self._route)

    def _route(self, route: Route) -> None:
        if STREAM_PATH.search(urlsplit(route.request.url).path):
            route.continue_()
            return
        try:
            try:
                response = route.fetch()
            except PlaywrightError as error:
                # A kept-alive connection the server had just closed: the request never reached it, so it
                # is sent again, once (the live server keeps connections for minutes to make this rare).
                if "ECONNRESET" not in str(error):
                    raise
                response = route.fetch()
            body = response.body()
        except PlaywrightError as error:
            # The page went away (a reload, a link followed) while its request was on its way: nothing
            # reached it, so there is nothing to read.
            if "disposed" in str(error) or "closed" in str(error):
                return
            raise
        if "json" in response.headers.get("content-type", "") and body:
            self.received.append(Received(url=route.request.url, body=json.loads(body)))
        try:
            route.fulfill(response=response, body=body)
        except PlaywrightError as error:
            if "disposed" not in str(error) and "closed" not in str(error):
                raise

    def watch(self, page: Page) -> Page:
        """Reads the page's EventSource messages (DevTools protocol) and its console's errors."""
        session = self.context.new_cdp_session(page)
        session.on("Network.requestWillBeSent", self._request)
        session.on("Network.eventSourceMessageReceived", self._message)
        session.send("Network.enable")
        self._sessions.append(session)
        page.on("console", lambda message: self._console(message.type, message.text))
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        return page

    def _request(self, params: dict[str, Any]) -> None:
        self._streams[params["requestId"]] = params["request"]["url"]

    def _message(self, params: dict[str, Any]) -> None:
        url = self._streams.get(params["requestId"], "")
        self.received.append(Received(url=url, body=json.loads(params["data"]), event=params["eventName"]))

    def _console(self, kind: str, text: str) -> None:
        # A 404 from the person stream's feature detection and a 409 the page handles are answers, not
        # faults; a refused script or style (the Content-Security-Policy) or an exception is.
        if kind == "error" and "Failed to load resource" not in text:
            self.problems.append(f"console: {text}")

    def events(self, game: str) -> list[dict[str, Any]]:
        return [item.body for item in self.received if item.event is not None and item.game == game]


def _walk(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}]")


def _game_views(body: Any) -> Iterator[dict[str, Any]]:
    """The game views in an answer: a game, a daily attempt's game, a version conflict's `current`."""
    for _, value in _walk(body):
        if isinstance(value, dict) and "your_seat" in value and "hand" in value and "legal_moves" in value:
            yield value


@dataclass
class Truth:
    """What each seat of a game held in each hand, from the log once the hand was over (its plays and the
    cards left, which the hand's result shows everyone) and, for a hand still in play, from the database."""

    held: dict[tuple[int, int], set[str]]
    hand_of_seq: dict[int, int]
    hand_of_version: dict[int, int]


def _database_rows(database_url: str, game: str) -> dict[str, Any] | None:
    """The game's stored state, read straight from the live server's database (never through the API)."""
    if database_url.startswith("sqlite:///"):
        with sqlite3.connect(database_url.removeprefix("sqlite:///")) as conn:
            row = conn.execute(
                "SELECT state FROM games_game WHERE id = ?", [game.replace("-", "")]
            ).fetchone()
        return json.loads(row[0]) if row else None
    with psycopg.connect(database_url) as conn:
        found = conn.execute("SELECT state FROM games_game WHERE id = %s", [game]).fetchone()
    return found[0] if found else None


def game_truth(log: list[dict[str, Any]], database_url: str | None, game: str) -> Truth:
    """What each seat held, from the log a seated person reads and, for a hand in play, the database."""
    held: dict[tuple[int, int], set[str]] = {}
    hand_of_seq: dict[int, int] = {}
    hand_of_version: dict[int, int] = {}
    hand = 0
    for event in log:
        if event["type"] == "deal":
            hand = event["hand_number"]
        hand_of_seq[event["seq"]] = hand
        hand_of_version[event["version"]] = hand
        if event["type"] == "play":
            held.setdefault((hand, event["seat"]), set()).add(event["card"])
        if event["type"] == "hand_over":
            for seat, cards in enumerate(event["hands"]):
                held.setdefault((event["hand_number"], seat), set()).update(cards)
    state = _database_rows(database_url, game) if database_url else None
    if state and state.get("hands") and state.get("status") == "playing":
        for seat, cards in enumerate(state["hands"]):
            held.setdefault((state["hand_number"], seat), set()).update(cards)
    return Truth(held=held, hand_of_seq=hand_of_seq, hand_of_version=hand_of_version)


def foreign_cards(received: list[Received], seats: dict[str, int], truths: dict[str, Truth]) -> list[str]:
    """Every place where what the page received names a card its person did not hold: their hand, their own
    draws, their legal moves and hints may name only cards of their seat in that hand; another seat's draw
    names none; no view holds anyone's hand but the hand's result, which everyone sees once the hand is
    over."""
    found: list[str] = []

    def own(game: str, hand: int, card: str, where: str) -> None:
        if card not in truths[game].held.get((hand, seats[game]), set()):
            found.append(f"{where}: {card} (game {game}, hand {hand}, seat {seats[game]})")

    def event_cards(game: str, event: dict[str, Any], where: str) -> None:
        hand = truths[game].hand_of_seq.get(event["seq"], 0)
        if event["type"] == "draw" and "card" in event:
            if event["seat"] != seats[game]:
                found.append(f"{where}: another seat's draw names {event['card']}")
            else:
                own(game, hand, event["card"], where)

    for item in received:
        for path, value in _walk(item.body):
            # Every seat's cards left are shown only in a hand's result (a view's hand_result, a hand_over
            # event), once the hand is over; the stock is only ever its size.
            if isinstance(value, dict) and "hands" in value and not {"reason", "penalties"} <= set(value):
                found.append(f"{item.url} {path}: a list of hands")
            if path.endswith(".stock") and not isinstance(value, int):
                found.append(f"{item.url} {path}: the stock's cards")
        game = item.game
        if item.event is not None and game in truths:
            event_cards(game, item.body, f"stream {item.url} {item.event}")
            continue
        for view in _game_views(item.body):
            game = view["id"]
            if game not in truths:
                continue
            if view["status"] not in ("finished",) and view.get("seed"):
                found.append(f"{item.url}: the seed of a game in play")
            for card in view["hand"]:
                own(game, view["hand_number"], card, f"{item.url} hand")
            for move in view["legal_moves"]:
                if move["type"] == "play":
                    own(game, view["hand_number"], move["card"], f"{item.url} legal move")
            for event in view["events"]:
                event_cards(game, event, f"{item.url} events")
        if game in truths and item.resource == "events" and isinstance(item.body, dict):
            for event in item.body.get("items", []):
                event_cards(game, event, f"{item.url} items")
        if game in truths and item.resource == "hint" and isinstance(item.body, dict):
            hand = truths[game].hand_of_version.get(item.body["version"], 0)
            for move in item.body["moves"]:
                if move["type"] == "play":
                    own(game, hand, move["card"], f"{item.url} hint")
    return found


def assert_no_foreign_cards(recorder: Recorder, base_url: str, token: str, database_url: str) -> int:
    """Checks everything the person's browser received (see foreign_cards); returns how many answers and
    events were read."""
    from tests.support.live_api import api

    assert recorder.problems == [], recorder.problems
    games = {item.game for item in recorder.received if item.game}
    games |= {view["id"] for item in recorder.received for view in _game_views(item.body)}
    seats: dict[str, int] = {}
    truths: dict[str, Truth] = {}
    for game in sorted(games):
        view = api(base_url, "GET", f"games/{game}", token=token)
        seats[game] = view["your_seat"]
        log: list[dict[str, Any]] = []
        after = 0
        while True:
            page = api(base_url, "GET", f"games/{game}/events?after={after}&limit=1000", token=token)
            log += page["items"]
            after = page["more_after"]
            if page["next"] is None:
                break
        truths[game] = game_truth(log, database_url, game)
    assert foreign_cards(recorder.received, seats, truths) == []
    return len(recorder.received)


# --- axe-core ----------------------------------------------------------------------------------------------


def axe_source() -> str:
    """axe-core's script, from npm at the pinned version, kept in a folder of the machine's temporary
    files."""
    folder = Path(tempfile.gettempdir()) / f"kingscorner-axe-core-{AXE_VERSION}"
    script = folder / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        npm = shutil.which("npm")
        if npm is None:
            if os.environ.get("CI"):
                pytest.fail("npm is needed for axe-core (Node.js, as .ci/run's Spectral needs it)")
            pytest.skip("npm is not installed")
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                npm,
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(folder),
                f"axe-core@{AXE_VERSION}",
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return script.read_text(encoding="utf-8")


def serious_accessibility_violations(page: Page) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now (WCAG 2.1 A and AA and best
    practice). The script is evaluated through the DevTools protocol, which the page's policy does not
    govern: the pages themselves run no script of another origin."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    results = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations'], runOnly: {type: 'tag', "
        "values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})).violations"
    )
    return [
        f"{violation['id']} ({violation['impact']}): {[node['target'] for node in violation['nodes']][:5]}"
        for violation in results
        if violation["impact"] in ("serious", "critical")
    ]


def moment(page: Page, test: str, name: str, *, audit: bool = True) -> None:
    """A key moment of a test: its screenshot saved as an artifact, and the page audited by axe-core."""
    page.screenshot(path=artifact_path(test, name), full_page=True)
    # Nothing wider than the screen: a phone scrolls the page down, never sideways.
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"{name}: the page is {width[0]} px wide on a screen of {width[1]}"
    if audit:
        violations = serious_accessibility_violations(page)
        assert violations == [], f"{name}: {violations}"


# --- at the table --------------------------------------------------------------------------------------


def wait_for_version_change(page: Page, version: str | None) -> None:
    page.wait_for_function(
        "version => document.body.dataset.version !== version", arg=version, timeout=PATIENCE_MS
    )


def table_state(page: Page) -> dict[str, str]:
    state: dict[str, str] = page.evaluate("() => ({...document.body.dataset})")
    return state


def wait_for_turn_or_end(page: Page) -> dict[str, str]:
    page.wait_for_function(
        "() => document.body.dataset.yourTurn === 'true' || ['hand_over', 'finished'].includes("
        "document.body.dataset.status)",
        timeout=PATIENCE_MS * 4,
    )
    return table_state(page)


def _send(page: Page, act: Callable[[], None]) -> None:
    """Does `act` (a click or a key that sends a move) and waits for the answer and the page's new view."""
    before = table_state(page).get("version")
    with page.expect_response(lambda response: "/moves" in response.url, timeout=PATIENCE_MS):
        act()
    wait_for_version_change(page, before)


def click_turn(page: Page, *, plays: int = 99) -> list[str]:
    """One turn by mouse: up to `plays` cards the page marks playable, each clicked and then the first pile
    it marks as taking it, a side pile moved when nothing can be played, then End turn. Returns what it
    did."""
    done: list[str] = []
    # Locators, not element handles: the page draws the hand and the piles again whenever it learns more.
    playable = page.locator("#hand button[data-playable='true']")
    movable = page.locator("#piles .pile[data-movable='true']")
    target = page.locator("#piles .pile[data-target='true']")
    while len(done) < plays and table_state(page).get("yourTurn") == "true":
        if playable.count():
            code = playable.first.get_attribute("data-card")
            playable.first.click()
            _send(page, target.first.click)
            done.append(f"play {code}")
        elif movable.count():
            name = movable.first.get_attribute("data-pile")
            movable.first.click()
            _send(page, target.first.click)
            done.append(f"move {name}")
        else:
            break
    if table_state(page).get("yourTurn") == "true":
        _send(page, lambda: page.click("#end-turn"))
        done.append("end_turn")
    return done


def _focused(page: Page) -> dict[str, str | None]:
    focused: dict[str, str | None] = page.evaluate(
        "() => { const active = document.activeElement; return {id: active.id || null, "
        "card: active.dataset.card || null, pile: active.dataset.pile || null, "
        "inHand: !!active.closest('#hand')}; }"
    )
    return focused


def tab_to(page: Page, found: Callable[[dict[str, Any]], bool], *, presses: int = 60) -> None:
    """Presses Tab until the focused element is the one `found` says, as a person who has no mouse."""
    for _ in range(presses):
        if found(_focused(page)):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached it; the focus is on {_focused(page)}")


# The piles as the table page lays them out round the stock, [row, column], and how its arrow keys move among
# them (the stock in the middle is passed over).
PLACES = {
    "NW": (0, 0),
    "N": (0, 1),
    "NE": (0, 2),
    "W": (1, 0),
    "E": (1, 2),
    "SW": (2, 0),
    "S": (2, 1),
    "SE": (2, 2),
}
ARROWS = {"ArrowUp": (-1, 0), "ArrowDown": (1, 0), "ArrowLeft": (0, -1), "ArrowRight": (0, 1)}


def _arrow_step(pile: str, key: str) -> str:
    row, column = PLACES[pile]
    step_row, step_column = ARROWS[key]
    for _ in range(3):
        row, column = row + step_row, column + step_column
        if not (0 <= row <= 2 and 0 <= column <= 2):
            return pile
        for name, place in PLACES.items():
            if place == (row, column):
                return name
    return pile


def arrow_keys(start: str, goal: str) -> list[str]:
    """The arrow keys that take the focus from one pile to another (a breadth-first search)."""
    paths = {start: list[str]()}
    queue = [start]
    while queue:
        pile = queue.pop(0)
        if pile == goal:
            return paths[pile]
        for key in ARROWS:
            following = _arrow_step(pile, key)
            if following not in paths:
                paths[following] = [*paths[pile], key]
                queue.append(following)
    raise AssertionError(f"no way from {start} to {goal}")


def key_turn(page: Page, *, plays: int = 99) -> list[str]:
    """One turn by keyboard alone: Tab into the hand, the arrow keys to a playable card, Enter (which takes
    the focus to the first pile it fits on), Enter again; a side pile moved the same way (Tab to the table,
    the arrow keys to the pile, Enter, Enter) when no card can be played; then Tab to End turn and Enter."""
    done: list[str] = []
    while len(done) < plays and table_state(page).get("yourTurn") == "true":
        playable = page.eval_on_selector_all(
            "#hand button", "cards => cards.map(card => card.dataset.playable === 'true')"
        )
        movable = page.eval_on_selector_all(
            "#piles .pile[data-movable='true']", "piles => piles.map(pile => pile.dataset.pile)"
        )
        if True in playable:
            tab_to(page, lambda focused: bool(focused["inHand"]))
            page.keyboard.press("Home")
            for _ in range(playable.index(True)):
                page.keyboard.press("ArrowRight")
            code = _focused(page)["card"]
            page.keyboard.press("Enter")
            assert _focused(page)["pile"] is not None, "picking a card takes the focus to a pile it fits on"
            _send(page, lambda: page.keyboard.press("Enter"))
            done.append(f"play {code}")
        elif movable:
            tab_to(page, lambda focused: focused["pile"] is not None)
            for key in arrow_keys(str(_focused(page)["pile"]), movable[0]):
                page.keyboard.press(key)
            assert _focused(page)["pile"] == movable[0]
            page.keyboard.press("Enter")
            _send(page, lambda: page.keyboard.press("Enter"))
            done.append(f"move {movable[0]}")
        else:
            break
    if table_state(page).get("yourTurn") == "true":
        tab_to(page, lambda focused: focused["id"] == "end-turn")
        _send(page, lambda: page.keyboard.press("Enter"))
        done.append("end_turn")
    return done
