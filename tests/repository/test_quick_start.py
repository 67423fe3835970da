"""The quick start's server is the whole product: its first command, run as written, serves the guides, plays
the turn clock, closes a day at its deadline and publishes its par, seen through the API only."""

import http.client
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from tests.support.quick_start import QuickStart
from tests.support.stack import call

pytestmark = pytest.mark.slow

TURN_SECONDS = 10


@pytest.fixture(scope="module")
def quick_start() -> Iterator[QuickStart]:
    server = QuickStart()
    try:
        yield server
    finally:
        server.close()


def _api(server: QuickStart, method: str, path: str, body: Any = None, token: str = "") -> Any:
    status, answer, _ = call(server.port, method, f"/api/v1/{path}", body, token)
    assert 200 <= status < 300, (method, path, status, answer, server.log())
    return answer


def _player(server: QuickStart, name: str) -> str:
    token: str = _api(server, "POST", "players", {"name": name})["token"]
    return token


def _wait_for(what: str, server: QuickStart, check: Callable[[], Any], timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    pytest.fail(f"{what} did not happen within {timeout}s; the server said:\n{server.log()}")


def _deadline_in_the_next_minutes(now: datetime, restart: timedelta) -> datetime:
    """At least `restart` and a minute from now (the time the command takes to install and serve again, and
    the day's attempt to start), 15 seconds before a minute starts: the leaderboard is `closing` for those
    seconds, until the close job, which runs at the start of each minute, records the unfinished attempts."""
    deadline = (now + restart + timedelta(seconds=60)).replace(microsecond=0)
    if deadline.second > 45:
        deadline += timedelta(minutes=1)
    return deadline.replace(second=45)


# The command makes a new virtual environment and installs the package, compiling the engine and building the
# guides: on a busy machine that alone can pass the suite's 300 s (QuickStart.start waits up to 900 s).
@pytest.mark.timeout(1800)
def test_the_first_command_runs_the_turn_clock_the_days_close_and_par(quick_start: QuickStart) -> None:
    # The command as written: a new virtual environment, the install, the migrations, then uvicorn.
    started = time.monotonic()
    quick_start.start()
    # Serving again installs again in the same environment, which takes at most as long as this first time.
    restart = timedelta(seconds=time.monotonic() - started)
    # The install built the guides, which the server serves under /docs/.
    connection = http.client.HTTPConnection("127.0.0.1", quick_start.port, timeout=30)
    connection.request("GET", "/docs/daily/")
    guide = connection.getresponse()
    assert guide.status == 200 and guide.getheader("Content-Type", "").startswith("text/html")
    assert "Fair play" in guide.read().decode()
    connection.close()
    # It serves the web client too, page and scripts, as the README's top says.
    with urllib.request.urlopen(f"{quick_start.base_url}/play/", timeout=10) as page:
        assert page.status == 200 and b"/static/web/js/lobby.js" in page.read()
    with urllib.request.urlopen(f"{quick_start.base_url}/static/web/js/lobby.js", timeout=10) as script:
        assert script.status == 200 and b"followPerson" in script.read()
    token = _player(quick_start, "Ada")
    table = _api(
        quick_start,
        "POST",
        "games",
        {
            "seats": [{"kind": "person"}, {"kind": "computer", "level": "normal"}],
            "turn_seconds": TURN_SECONDS,
        },
        token,
    )
    assert table["status"] == "playing" and table["turn_deadline"] is not None and table["is_your_turn"]

    def timed_out() -> list[dict[str, Any]]:
        events = _api(quick_start, "GET", f"games/{table['id']}/events?after=0", token=token)["items"]
        return [event for event in events if event["type"] == "turn_timed_out"]

    # Ada does not move: her turn is played for her once it runs out, and the clock starts on her next one.
    event = _wait_for("the turn clock", quick_start, timed_out, 6 * TURN_SECONDS)[0]
    assert event["seat"] == table["your_seat"]
    game = _api(quick_start, "GET", f"games/{table['id']}", token=token)
    assert game["version"] > table["version"]
    assert game["status"] != "playing" or game["turn_deadline"] > table["turn_deadline"]
    quick_start.stop()

    # The same command again, with today's finishing deadline moved to the next minutes (docs/operations.md's
    # recipe moves yesterday's into the past the same way).
    now = datetime.now(UTC)
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)
    if midnight - now < timedelta(minutes=4) + restart:
        time.sleep((midnight - now).total_seconds() + 1)
        now = datetime.now(UTC)
        midnight += timedelta(days=1)
    today = now.date()
    deadline = _deadline_in_the_next_minutes(now, restart)
    grace = int((deadline - midnight).total_seconds())
    quick_start.start({"DAILY_FINISH_GRACE_SECONDS": str(grace)})
    _the_day_closes_and_its_par_appears(quick_start, today, deadline)


def _the_day_closes_and_its_par_appears(server: QuickStart, today: date, deadline: datetime) -> None:
    token = _player(server, "Grace")
    day = today.isoformat()
    attempt = _api(server, "POST", f"daily/{day}/attempts", {}, token)
    assert attempt["ranked"], "the ranked attempt must start before the deadline; the server started late"
    leaderboard = _api(server, "GET", f"daily/{day}/leaderboard")
    assert leaderboard["status"] == "open" and leaderboard["par"] is None
    assert _api(server, "GET", f"daily/{day}")["par"] is None
    status, problem, _ = call(server.port, "GET", f"/api/v1/daily/{day}/par")
    assert (status, problem["code"]) == (404, "par_not_ready")
    # Yesterday's deadline is past too (docs/operations.md's recipe): its first request makes its deal,
    # unclosed.
    yesterday = (today - timedelta(days=1)).isoformat()
    assert _api(server, "GET", f"daily/{yesterday}/leaderboard")["status"] == "closing"

    statuses = [leaderboard["status"]]

    def final() -> dict[str, Any] | None:
        page: dict[str, Any] = _api(server, "GET", f"daily/{day}/leaderboard")
        if page["status"] != statuses[-1]:
            statuses.append(page["status"])
        return page if page["status"] == "final" else None

    wait = (deadline - datetime.now(UTC)).total_seconds() + 120
    page = _wait_for("the day's close", server, final, wait)
    assert statuses == ["open", "closing", "final"]
    # Grace's ranked attempt, left unfinished, was closed as it stood.
    [entry] = page["items"]
    assert entry["closed"] and entry["player"]["name"] == "Grace"

    def par(day: str) -> Callable[[], dict[str, Any] | None]:
        def published() -> dict[str, Any] | None:
            status, replay, _ = call(server.port, "GET", f"/api/v1/daily/{day}/par")
            return replay if status == 200 else None

        return published

    replay = _wait_for("the day's par", server, par(day), 180)
    assert replay["date"] == day and replay["seed"] is not None
    assert replay["steps"] and replay["par"]["result"] is not None
    assert replay["par"]["method"] in {"beam", "normal", "sharp", "player"}
    assert _api(server, "GET", f"daily/{day}")["par"] == replay["par"]
    assert _api(server, "GET", f"daily/{day}/leaderboard")["par"] == replay["par"]["result"]
    assert _api(server, "GET", f"daily/{yesterday}/leaderboard")["status"] == "final"
    assert _wait_for("yesterday's par", server, par(yesterday), 120)["date"] == yesterday
