"""A person plays the web client at /play/ in a real browser: registers and plays a whole game against three
computers by clicks; copies the token and signs in with it on another device; asks for a hint; is shown the
game as it is when a move of theirs meets a 409 version_conflict; deals the next hand once one is over, even
when its Deal was sent at a version behind the game's."""

import json
import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Response, Route

from tests.support.games import SEED
from tests.support.live_api import api
from tests.support.web_pages import click_turn, moment, table_state, wait_for_turn_or_end
from tests.web.conftest import Person

pytestmark = pytest.mark.slow

TURNS_MAX = 200
# The game's stream (`?ticket=`) and the person stream (players/me/stream).
STREAMS = re.compile(r"/stream(\?|$)")
# The request that deals the next hand.
HANDS = re.compile(r"/api/v1/games/[^/]+/hands$")


def test_a_person_registers_and_plays_a_whole_game_against_three_computers_by_clicks(
    people: Callable[[], Person], shots: str
) -> None:
    ada = people()
    page = ada.page
    page.goto("/play/")
    moment(page, shots, "01-register")
    page.fill("#register-name", "Ada")
    page.click("#register-form button[type=submit]")
    page.wait_for_selector("#play-area:not([hidden])")
    assert page.inner_text("#me-name").startswith("Ada#")
    page.wait_for_selector("#daily-card-body .countdown")
    moment(page, shots, "02-lobby")

    page.select_option("#new-game-opponents", "3")
    page.select_option("#level-3", "sharp")
    page.select_option("#new-game-target", "")
    page.click("#new-game-form button[type=submit]")
    page.wait_for_url("**/play/games/*")
    state = wait_for_turn_or_end(page)
    assert page.locator("#players li").count() == 4
    assert page.locator("#piles .pile").count() == 8
    moment(page, shots, "03-table")

    turns = 0
    picked = False
    while state["status"] == "playing":
        if not picked and page.query_selector("#hand button[data-playable='true']"):
            # A card picked: the piles it fits on are marked, in words and by their border.
            page.click("#hand button[data-playable='true']")
            assert page.locator("#piles .pile[data-target='true']").count() >= 1
            assert "picked" in page.inner_text("#selection")
            moment(page, shots, "04-card-picked")
            page.keyboard.press("Escape")
            picked = True
        click_turn(page)
        turns += 1
        assert turns < TURNS_MAX
        state = wait_for_turn_or_end(page)
    assert state["status"] == "finished"
    page.wait_for_selector("#result:not([hidden])")
    assert page.locator("#result-rows tr").count() == 4
    assert "Game over" in page.inner_text("#result-title")
    moment(page, shots, "05-game-over")
    assert table_state(page)["status"] == "finished"


def test_the_token_is_copied_on_one_device_and_signs_in_on_another(
    people: Callable[[], Person], shots: str
) -> None:
    laptop, phone = people(), people()
    laptop.page.goto("/play/")
    laptop.page.fill("#register-name", "Ada")
    laptop.page.click("#register-form button[type=submit]")
    laptop.page.wait_for_selector("#play-area:not([hidden])")
    name = laptop.page.inner_text("#me-name")
    laptop.page.select_option("#new-game-opponents", "1")
    laptop.page.select_option("#new-game-target", "25")
    laptop.page.click("#new-game-form button[type=submit]")
    laptop.page.wait_for_url("**/play/games/*")
    game = laptop.page.url.rsplit("/", 1)[1]
    made = api(laptop.base_url, "GET", f"games/{game}", token=laptop.token())
    assert (len(made["players"]), made["target_score"]) == (2, 25)
    laptop.page.goto("/play/")
    laptop.page.click("#signed-in summary")
    laptop.page.click("#copy-token")
    token = laptop.clipboard()
    assert token == laptop.token()
    moment(laptop.page, shots, "01-token-shown")

    phone.page.goto("/play/")
    phone.page.click("#signed-out summary")
    phone.page.fill("#sign-in-token", token)
    phone.page.click("#sign-in-form button[type=submit]")
    phone.page.wait_for_selector("#play-area:not([hidden])")
    assert phone.page.inner_text("#me-name") == name
    phone.page.wait_for_selector(f"#game-list li[data-game='{game}']")
    moment(phone.page, shots, "02-signed-in-elsewhere")
    # Signing out forgets the token on that device only.
    phone.page.click("#sign-out")
    phone.page.wait_for_selector("#signed-out:not([hidden])")
    assert phone.page.evaluate("() => localStorage.getItem('kingscorner.token')") is None
    laptop.page.reload()
    laptop.page.wait_for_selector("#play-area:not([hidden])")
    assert laptop.page.inner_text("#me-name") == name


POSITION = "() => localStorage.getItem('kingscorner.person-stream.last-id')"


def test_a_token_refused_on_opening_is_forgotten_with_how_far_its_person_stream_was_read(
    people: Callable[[], Person], shots: str
) -> None:
    """A token replaced elsewhere is dropped when a page opens, and with it the person stream's position: a
    player registered next in that browser reads their own stream from its start, where they resumed from
    the last player's id (missing their first events, or told to resync)."""
    ada = people()
    page = ada.page
    page.goto("/play/")
    page.evaluate(
        "() => { localStorage.setItem('kingscorner.token', 'kc_replaced-elsewhere');"
        " localStorage.setItem('kingscorner.person-stream.last-id', '3'); }"
    )
    page.reload()
    page.wait_for_selector("#signed-out:not([hidden])")
    assert page.evaluate("() => localStorage.getItem('kingscorner.token')") is None
    assert page.evaluate(POSITION) is None
    # A position left without a token (by an earlier version of the page) is not the new player's either.
    page.evaluate("() => localStorage.setItem('kingscorner.person-stream.last-id', '3')")
    with page.expect_request(lambda request: "/players/me/stream" in request.url) as opened:
        page.fill("#register-name", "Ada")
        page.click("#register-form button[type=submit]")
    assert opened.value.headers.get("last-event-id") is None
    page.wait_for_selector("#play-area:not([hidden])")
    assert page.evaluate(POSITION) != "3"
    moment(page, shots, "01-registered-afresh")


def test_a_stale_page_is_shown_the_game_as_it_is_and_a_hand_over_is_dealt_on(
    people: Callable[[], Person], shots: str
) -> None:
    ada = people()
    page = ada.page
    page.goto("/play/")
    page.fill("#register-name", "Ada")
    page.click("#register-form button[type=submit]")
    page.wait_for_selector("#play-area:not([hidden])")
    # A game to 25 from a seed where hand 1 ends with the game still on (from a random deal the computer went
    # out first with Ada holding 25 or more about once in 700 runs, and the game was over, not the hand).
    token = ada.token()
    body = {"opponents": 1, "target_score": 25, "seed": SEED}
    game = api(ada.base_url, "POST", "games", body, token)["id"]
    page.goto(f"/play/games/{game}")
    wait_for_turn_or_end(page)
    page.click("#hint")
    page.wait_for_selector("#hint-text:not([hidden])")
    assert page.inner_text("#hint-text").startswith("Hint:")

    # Without its streams (the game's and the person's) the page cannot know that the game moved on (here:
    # the same player, elsewhere).
    page.route(STREAMS, lambda route: route.abort())
    page.reload()
    wait_for_turn_or_end(page)
    view = api(ada.base_url, "GET", f"games/{game}", token=token)
    body = {"moves": [{"type": "end_turn"}], "expected_version": view["version"]}
    moved = api(ada.base_url, "POST", f"games/{game}/moves", body, token)
    with page.expect_response(lambda response: "/moves" in response.url and response.status == 409):
        page.click("#end-turn")
    page.wait_for_function("version => document.body.dataset.version === version", arg=str(moved["version"]))
    assert "moved on" in page.inner_text("#notices")
    moment(page, shots, "01-told-the-game-moved-on")

    # With its stream again, the page follows the hand to its end (played elsewhere) and deals the next.
    page.unroute(STREAMS)
    page.reload()
    wait_for_turn_or_end(page)
    view = api(ada.base_url, "GET", f"games/{game}", token=token)
    while view["status"] == "playing":
        body = {"moves": [view["legal_moves"][0]], "expected_version": view["version"]}
        view = api(ada.base_url, "POST", f"games/{game}/moves", body, token)
    assert view["status"] == "hand_over"
    page.wait_for_selector("#deal:not([hidden])")
    assert page.inner_text("#result-title") == "Hand 1 over"
    assert page.locator("#result-rows tr").count() == 2
    moment(page, shots, "02-hand-over")

    # The page's Deal sent at a version behind the game's (as when its stream is still on the way): the 409's
    # `current` says the hand is still over, so the page deals again at that version, with no second click.
    stale = {"sent": False}

    def behind(route: Route) -> None:
        if route.request.method != "POST" or stale["sent"]:
            route.continue_()
            return
        stale["sent"] = True
        sent = json.loads(route.request.post_data or "{}")
        route.continue_(post_data=json.dumps({**sent, "expected_version": sent["expected_version"] - 1}))

    def refused(response: Response) -> bool:
        return HANDS.search(response.url) is not None and response.status == 409

    page.route(HANDS, behind)
    with page.expect_response(refused):
        page.click("#deal")
    # The next hand is dealt: in play, or already over when the computer went out in its first turn.
    page.wait_for_function("() => document.body.dataset.hand === '2'")
    assert stale["sent"]
    page.unroute(HANDS)
    if page.evaluate("document.body.dataset.status") == "playing":
        assert page.is_hidden("#result")
    else:
        assert page.inner_text("#result-title") in ("Hand 2 over", "Game over")
