"""The daily deal in the web client: a person plays the ranked attempt to the end (the page says it is ranked
and that hints are off), then sees the result, the leaderboard around them, the history and the share text;
a revealed day shows its par line replayed move by move and how to check the day."""

from collections.abc import Callable
from datetime import date, timedelta

import pytest

from tests.support.live_api import api
from tests.support.stack import Stack
from tests.support.web_pages import click_turn, moment, table_state, wait_for_turn_or_end
from tests.web.conftest import Person

pytestmark = pytest.mark.slow

TURNS_MAX = 200
PAR_STEPS_SHOWN = 3


def _register(person: Person, name: str) -> None:
    person.page.goto("/play/")
    person.page.fill("#register-name", name)
    person.page.click("#register-form button[type=submit]")
    person.page.wait_for_selector("#play-area:not([hidden])")


def test_a_person_plays_the_ranked_daily_to_the_end_and_sees_the_leaderboard_and_share_text(
    people: Callable[[], Person], shots: str
) -> None:
    dana = people()
    page = dana.page
    _register(dana, "Dana")
    page.click("#daily-card-body a")
    page.wait_for_selector("#start-attempt")
    attempt = page.inner_text("#attempt-body")
    assert "ranked" in attempt and "Hints are off" in attempt
    moment(page, shots, "01-daily-before")

    page.click("#start-attempt")
    page.wait_for_url("**/play/games/*?daily=*")
    page.wait_for_selector("#daily-banner:not([hidden])")
    banner = page.inner_text("#daily-banner")
    assert "ranked attempt" in banner and "hints are off" in banner
    state = wait_for_turn_or_end(page)
    assert page.is_hidden("#hint")
    moment(page, shots, "02-ranked-attempt")
    for _ in range(TURNS_MAX):
        if state["status"] != "playing":
            break
        click_turn(page)
        state = wait_for_turn_or_end(page)
    assert table_state(page)["status"] == "finished"
    page.wait_for_selector("#daily-result-link:not([hidden])")
    assert page.is_hidden("#rematch")
    moment(page, shots, "03-attempt-over")

    page.click("#daily-result-link")
    page.wait_for_selector("#standing:not([hidden])")
    assert "rank" in page.inner_text("#standing-text")
    you = page.locator("#board-rows tr.you")
    you.wait_for()
    assert "(you)" in you.inner_text()
    # The share text comes with the history, which the page reads beside the board.
    page.wait_for_function("() => document.getElementById('share-text').value !== ''")
    share = page.input_value("#share-text")
    assert share.startswith("Kings Corner Daily #") and "rank" in share
    page.click("#copy-share")
    assert dana.clipboard() == share
    page.wait_for_selector("#history:not([hidden])")
    assert "Streak: 1 day" in page.inner_text("#streaks")
    moment(page, shots, "04-result-and-leaderboard")


def test_a_revealed_day_replays_its_par_line_move_by_move_and_says_how_to_verify_it(
    people: Callable[[], Person], shots: str, web_server: Stack
) -> None:
    # Yesterday's seed is revealed on this server (its finishing grace is negative); reading the day makes
    # its deal, and the par job works it out now rather than at its next minute.
    yesterday = api(web_server.base_url, "GET", "daily")["date"]
    yesterday = (date.fromisoformat(yesterday) - timedelta(days=1)).isoformat()
    assert api(web_server.base_url, "GET", f"daily/{yesterday}")["seed"]
    web_server.manage("daily_par", "--date", yesterday)

    eve = people()
    page = eve.page
    _register(eve, "Eve")
    page.goto(f"/play/daily/{yesterday}")
    page.wait_for_selector("#par-replay:not([hidden])")
    assert "practice" in page.inner_text("#attempt-body").lower() or page.is_visible("#start-practice")
    first = page.inner_text("#par-move")
    assert first.startswith("The deal")
    moves = [first]
    for _ in range(PAR_STEPS_SHOWN):
        page.click("#par-next")
        moves.append(page.inner_text("#par-move"))
    assert moves[1].startswith("Move 1 of") and len(set(moves)) == len(moves)
    page.click("#par-last")
    assert page.is_disabled("#par-next")
    page.click("#par-first")
    assert page.inner_text("#par-move") == first
    command = page.inner_text("#verify-command")
    assert (
        command.startswith("python3 examples/verify_daily.py")
        and yesterday in command
        and "--anchor " in command
    )
    anchor = api(web_server.base_url, "GET", f"daily/anchor?date={yesterday}")["anchor"]
    assert anchor in command
    page.click("#par-next")
    moment(page, shots, "01-par-replay")
