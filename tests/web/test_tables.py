"""Two people at a table in two browser contexts: one creates it and copies the invitation link, the other
opens the link (the join page: who invites, the seats, the rules, the clock), registers a name and joins;
they play at least ten turns each, by keyboard and by mouse, each page learning of the other's moves from its
game stream; one reloads mid-game and carries on; at the end one asks for a rematch and the other follows."""

from collections.abc import Callable

import pytest

from tests.support.web_pages import (
    click_turn,
    key_turn,
    moment,
    table_state,
    wait_for_turn_or_end,
)
from tests.web.conftest import Person

pytestmark = pytest.mark.slow

TURNS_EACH = 10
TURNS_MAX = 160
RELOAD_AFTER = 4
# The other page learns of a rematch by reading the game again every 12 s until the person stream exists.
REMATCH_PATIENCE_MS = 60_000


def _whose_turn(ada: Person, grace: Person) -> Person | None:
    """Waits until one of the two pages shows its person to move, or the game over; that person, or None."""
    for _ in range(600):
        for person in (ada, grace):
            state = table_state(person.page)
            if state.get("status") == "finished":
                return None
            if state.get("yourTurn") == "true":
                return person
        ada.page.wait_for_timeout(100)
    raise AssertionError("neither page shows its person to move")


def test_two_people_share_a_link_play_by_keys_and_mouse_reload_and_rematch(
    people: Callable[[], Person], shots: str
) -> None:
    ada, grace = people(), people()
    ada.page.goto("/play/")
    ada.page.fill("#register-name", "Ada")
    ada.page.click("#register-form button[type=submit]")
    ada.page.wait_for_selector("#play-area:not([hidden])")
    ada.page.select_option("#new-table-seats", "2")
    ada.page.select_option("#seat-1", "person")
    ada.page.select_option("#new-table-clock", "300")
    ada.page.select_option("#new-table-target", "")
    ada.page.click("#new-table-form button[type=submit]")
    ada.page.wait_for_selector("#waiting:not([hidden])")
    link = ada.page.input_value("#invitation-link")
    assert link.startswith(f"{ada.base_url}/play/join/")
    ada.page.click("#copy-invitation")
    assert ada.clipboard() == link
    moment(ada.page, shots, "01-ada-waiting-with-the-link")

    grace.page.goto(link)
    grace.page.wait_for_selector("#invitation:not([hidden])")
    assert grace.page.inner_text("#inviter").startswith("Ada#")
    assert grace.page.locator("#join-seats li").count() == 2
    assert grace.page.inner_text("#join-clock") == "5 minutes a turn"
    assert grace.page.is_visible("#join-name")
    moment(grace.page, shots, "02-grace-opens-the-link")
    grace.page.fill("#join-name", "Grace")
    grace.page.click("#join-button")
    grace.page.wait_for_url("**/play/games/*")
    game_url = grace.page.url
    # Ada's page learns from its stream that the table started.
    ada.page.wait_for_selector("#board:not([hidden])")
    assert ada.page.url == game_url
    assert ada.page.is_visible("#clock") or grace.page.is_visible("#clock")

    turns = {"ada": 0, "grace": 0}
    names = {id(ada): "ada", id(grace): "grace"}
    reloaded = False
    for _ in range(TURNS_MAX):
        mover = _whose_turn(ada, grace)
        if mover is None:
            break
        name = names[id(mover)]
        plays = 1 if min(turns.values()) < TURNS_EACH else 99
        # Each person plays one turn by keys, the next by mouse.
        played = (
            key_turn(mover.page, plays=plays) if turns[name] % 2 == 0 else click_turn(mover.page, plays=plays)
        )
        # A turn ends with End turn, unless its last card went out and ended the hand.
        assert played[-1] == "end_turn" or table_state(mover.page)["status"] != "playing", played
        turns[name] += 1
        if turns[name] == 3 and name == "ada":
            moment(ada.page, shots, "03-ada-mid-game")
        if name == "grace" and turns["grace"] == RELOAD_AFTER and not reloaded:
            grace.page.reload()
            grace.page.wait_for_selector("#board:not([hidden])")
            assert table_state(grace.page)["yourTurn"] == "false"
            moment(grace.page, shots, "04-grace-after-reload")
            reloaded = True
    assert reloaded
    assert min(turns.values()) >= TURNS_EACH, turns
    for person in (ada, grace):
        wait_for_turn_or_end(person.page)
        person.page.wait_for_selector("#result:not([hidden])")
        assert table_state(person.page)["status"] == "finished"
    moment(ada.page, shots, "05-ada-game-over")
    moment(grace.page, shots, "06-grace-game-over")

    # Each page saw the other person's moves come in on its game stream.
    for person, other_seat in ((ada, 1), (grace, 0)):
        game_id = game_url.rsplit("/", 1)[1]
        streamed = person.recorder.events(game_id)
        assert any(event["type"] == "end_turn" and event["seat"] == other_seat for event in streamed)

    ada.page.click("#rematch")
    ada.page.wait_for_url(lambda url: "/play/games/" in url and url != game_url)
    rematch_url = ada.page.url
    ada.page.wait_for_selector("#board:not([hidden])")
    grace.page.wait_for_selector("#rematch-link:not([hidden])", timeout=REMATCH_PATIENCE_MS)
    grace.page.click("#rematch-link")
    grace.page.wait_for_url(rematch_url)
    grace.page.wait_for_selector("#board:not([hidden])")
    assert table_state(ada.page)["status"] == table_state(grace.page)["status"] == "playing"
    moment(grace.page, shots, "07-grace-at-the-rematch")
