"""The table page keeps its game stream through a server restart that outlasts the stream ticket: the
browser's EventSource reconnects with the old ticket, is refused (401 invalid_ticket) and gives up, and the
page asks for a new ticket, opens the stream again after the last event it had and reads the game again, so
the other person's next move reaches it as before, with no polling."""

from collections.abc import Callable

import pytest

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
