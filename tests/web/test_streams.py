"""The table page keeps its game stream through a server restart that outlasts the stream ticket: the
browser's EventSource reconnects with the old ticket, is refused (401 invalid_ticket) and gives up, and the
page asks for a new ticket, opens the stream again after the last event it had and reads the game again, so
the other person's next move reaches it as before, with no polling."""

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, Route

from tests.support.live_api import api
from tests.support.stack import Stack
from tests.support.web_pages import click_turn, moment, table_state, wait_for_turn_or_end
from tests.web.conftest import STREAM_TICKET_SECONDS, Person

pytestmark = pytest.mark.slow


def _tickets(person: Person) -> int:
    return sum(1 for item in person.recorder.received if item.resource == "stream-tickets")


def _moved(person: Person, game: str) -> bool:
    """Whether Grace's end_turn reached the page on the game stream."""
    return any(event["type"] == "end_turn" and event["seat"] == 1 for event in person.recorder.events(game))


def test_the_table_reopens_its_stream_with_a_new_ticket_after_a_restart_past_the_tickets_life(
    people: Callable[[], Person], shots: str, web_server: Stack
) -> None:
    ada = people()
    page = ada.page
    page.goto("/play/")
    page.fill("#register-name", "Ada")
    page.click("#register-form button[type=submit]")
    page.wait_for_selector("#play-area:not([hidden])")
    page.select_option("#new-table-clock", "")
    page.select_option("#new-table-target", "")
    page.click("#new-table-form button[type=submit]")
    page.wait_for_selector("#waiting:not([hidden])")
    grace = api(web_server.base_url, "POST", "players", {"name": "Grace"})["token"]
    code = page.input_value("#invitation-link").rsplit("/", 1)[1]
    api(web_server.base_url, "POST", f"invitations/{code}", token=grace)
    page.wait_for_selector("#board:not([hidden])")
    game = page.url.rsplit("/", 1)[1]
    if table_state(page)["yourTurn"] == "true":
        click_turn(page, plays=1)
    assert table_state(page)["yourTurn"] == "false"
    before = _tickets(ada)

    # The ticket runs out while the stream is open; then the server restarts.
    page.wait_for_timeout((STREAM_TICKET_SECONDS + 1) * 1000)
    web_server.stop("web")
    web_server.start_web(workers=1, asgi=True)

    view = api(web_server.base_url, "GET", f"games/{game}", token=grace)
    assert view["is_your_turn"]
    api(
        web_server.base_url,
        "POST",
        f"games/{game}/moves",
        {"moves": [{"type": "end_turn"}], "expected_version": view["version"]},
        token=grace,
    )
    # Only the streams can tell the page: nothing reads a game in play again on a timer. The person stream
    # (fetch, no ticket) may tell it first; the game stream comes back with a new ticket and the move.
    state = wait_for_turn_or_end(page)
    assert state["yourTurn"] == "true" and int(state["version"]) > view["version"]
    for _ in range(300):
        if _tickets(ada) > before and _moved(ada, game):
            break
        page.wait_for_timeout(100)
    assert _tickets(ada) > before
    assert _moved(ada, game)
    streamed = ada.recorder.events(game)
    assert [event["seq"] for event in streamed] == sorted({event["seq"] for event in streamed})
    moment(page, shots, "01-after-the-restart")


def _end_turn(base_url: str, game: str, token: str) -> None:
    view = api(base_url, "GET", f"games/{game}", token=token)
    assert view["is_your_turn"], view["current_seat"]
    body = {"moves": [{"type": "end_turn"}], "expected_version": view["version"]}
    api(base_url, "POST", f"games/{game}/moves", body, token=token)


TOLD = "#notices .notice"


def _a_table_begun_before_ada_signs_in(base: str) -> tuple[str, str, str, int]:
    """Ada's and Grace's tokens, their two-person table, begun and with Grace to play, and how many events
    Ada's person stream holds of it (seat_taken, game_started and, when she moved first, your_turn)."""
    ada = api(base, "POST", "players", {"name": "Ada"})["token"]
    grace = api(base, "POST", "players", {"name": "Grace"})["token"]
    made = api(base, "POST", "games", {"seats": [{"kind": "person"}, {"kind": "person"}]}, token=ada)
    game = made["id"]
    api(base, "POST", made["invitation"]["join"].split("/api/v1/", 1)[1], token=grace)
    first = api(base, "GET", f"games/{game}", token=ada)
    assert first["status"] == "playing"
    if first["is_your_turn"]:
        # Ada's turn (a your_turn of her history) passes to Grace before Ada's page connects.
        _end_turn(base, game, ada)
    return ada, grace, game, 3 if first["is_your_turn"] else 2


def _sign_in_and_take_the_history(
    page: Page, token: str, game: str, had: int, timeout_ms: float = 30_000
) -> None:
    """Signs the page in with `token` on a device with no stored id, and waits until the person stream's
    history (`had` events) has arrived, and a second more for anything it would tell."""
    page.goto("/play/")
    page.click("#signed-out summary")
    page.fill("#sign-in-token", token)
    page.click("#sign-in-form button[type=submit]")
    page.wait_for_selector(f"#game-list li[data-game='{game}']")
    page.wait_for_function(
        f"() => Number(localStorage.getItem('kingscorner.person-stream.last-id')) >= {had}",
        timeout=timeout_ms,
    )
    page.wait_for_timeout(1000)


def test_a_page_that_connects_without_an_id_tells_only_of_what_happens_after_not_the_feeds_history(
    people: Callable[[], Person], shots: str, web_server: Stack
) -> None:
    """Without a stored id the person stream sends every event kept: a page signing in on a new device takes
    the table's start and a turn of the day before as history (state, no notice), and tells the person of
    the next turn of theirs that begins."""
    base = web_server.base_url
    ada, grace, game, had = _a_table_begun_before_ada_signs_in(base)
    page = people().page
    _sign_in_and_take_the_history(page, ada, game, had)
    # ... and told nothing: the one notice is the sign-in's.
    assert [text for text in page.locator(TOLD).all_inner_texts() if "Signed in" not in text] == []
    moment(page, shots, "01-history-untold")

    _end_turn(base, game, grace)
    page.wait_for_selector(f"{TOLD}:has-text('It is your turn at a table.')")
    assert not [text for text in page.locator(TOLD).all_inner_texts() if "has started" in text]
    moment(page, shots, "02-a-new-turn-told")


def test_a_page_whose_first_connection_fails_takes_what_came_before_its_answered_one_as_history(
    people: Callable[[], Person], shots: str, web_server: Stack
) -> None:
    """The person stream's first request fails (the network drops it); the page retries, and the table's start
    and turn from before it connected are still history, not news."""
    base = web_server.base_url
    ada, grace, game, had = _a_table_begun_before_ada_signs_in(base)
    page = people().page
    dropped = {"count": 0}

    def drop_the_first(route: Route) -> None:
        if dropped["count"] == 0:
            dropped["count"] += 1
            route.abort()
        else:
            route.continue_()

    page.route("**/api/v1/players/me/stream", drop_the_first)
    # The retry waits its 3 s before the history can arrive.
    _sign_in_and_take_the_history(page, ada, game, had, timeout_ms=20_000)
    assert dropped["count"] == 1
    assert [text for text in page.locator(TOLD).all_inner_texts() if "Signed in" not in text] == []
    moment(page, shots, "01-history-untold-after-a-retry")
    _end_turn(base, game, grace)
    page.wait_for_selector(f"{TOLD}:has-text('It is your turn at a table.')")
