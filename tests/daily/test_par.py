"""Daily par in the service: computed by the job only once a day's seed is revealed, once per day however
often or on however many workers it runs, raised to a ranked player's better line, shown beside every result
and replayable step by step with nothing the player could not see; and `manage.py daily_par`."""

import io
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pytest_django import Settings
from rest_framework.test import APIClient

from daily import services
from daily.models import Attempt, DailyDeal, DailyPar, Submission
from daily.selectors.par import daily_deal_revealed
from daily.tasks import daily_pars_compute
from games.engine import State, observe, parse_move, step
from games.engine.par import Par, RevealedDeal, dealt, level_line, outcome_of, par_search, replay_line
from games.models import Game, PersonBroadcast
from games.services import game_moves_apply
from tests.support.daily import NOON, TODAY, Clock, ranked_submission

DEADLINE = datetime(2026, 3, 6, 1, 0, tzinfo=UTC)
SMALL_BUDGET = 200


@pytest.fixture(autouse=True)
def small_budget(settings: Settings) -> None:
    """A budget that keeps each search to a fraction of a second."""
    settings.DAILY_PAR_NODE_BUDGET = SMALL_BUDGET


def _revealed(day: date) -> RevealedDeal:
    return daily_deal_revealed(deal=services.daily_deal_get_or_create(day=day))


def _weak_search(deal: RevealedDeal, *, node_budget: int) -> Par:
    """A search that stops at once with the normal player's line: one a good player beats."""
    return par_search(deal, node_budget=1, seed_lines=[("normal", level_line(deal, "normal"))])


def _play_ranked(player: Any, moves: Sequence[Mapping[str, Any]]) -> Attempt:
    """Plays `moves` in a new ranked attempt at today's deal through the games service, turn by turn."""
    attempt = services.attempt_start(player=player, day=TODAY)
    turn: list[Mapping[str, Any]] = []
    for move in moves:
        turn.append(move)
        if move["type"] == "end_turn" or move is moves[-1]:
            game_moves_apply(game_id=attempt.game_id, player=player, moves=turn, expected_version=None)
            turn = []
    return attempt


# --- the job ------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_job_computes_nothing_before_the_seed_is_revealed(daily_clock: Clock) -> None:
    services.daily_deals_create_upcoming()
    daily_clock.set(DEADLINE - timedelta(seconds=1))
    assert daily_pars_compute.delay().get() == {}
    assert not DailyPar.objects.exists()
    with pytest.raises(ValueError):
        services.daily_par_compute(deal=DailyDeal.objects.get(date=TODAY))


@pytest.mark.django_db
def test_the_job_computes_a_revealed_day_once_with_a_line_that_replays_to_par(
    daily_clock: Clock, make_player: Callable[..., Any]
) -> None:
    deal = services.daily_deal_get_or_create(day=TODAY)
    player, _ = make_player()
    unfinished = services.attempt_start(player=player, day=TODAY)
    daily_clock.set(DEADLINE)

    assert daily_pars_compute.delay().get() == {"2026-03-05": DailyPar.objects.get().result}
    par = DailyPar.objects.get(deal=deal)
    # The day was closed first, so the results the par was checked against were final.
    deal.refresh_from_db()
    assert deal.attempts_closed_at is not None
    assert Submission.objects.get(attempt=unfinished).closed
    outcome = replay_line(_revealed(TODAY), par.moves)
    assert (outcome.result, outcome.turns, outcome.finished) == (par.result, par.turns, par.finished)
    assert (par.node_budget, par.search_result) == (SMALL_BUDGET, par.result)
    assert par.method in {"beam", "normal", "sharp"}

    daily_clock.set(DEADLINE + timedelta(hours=1))
    assert daily_pars_compute.delay().get() == {}
    assert list(DailyPar.objects.values_list("id", "computed_at")) == [(par.id, par.computed_at)]


@pytest.mark.django_db
def test_the_job_catches_up_on_missed_days_newest_first(daily_clock: Clock) -> None:
    days = [TODAY - timedelta(days=offset) for offset in range(3)]
    for day in days:
        services.daily_deal_get_or_create(day=day)
    # A second before the next day's reveal: that day's deal exists, its par must wait.
    daily_clock.set(DEADLINE + timedelta(days=1, seconds=-1))
    services.daily_deal_get_or_create(day=TODAY + timedelta(days=1))

    computed = daily_pars_compute.delay().get()
    assert list(computed) == [day.isoformat() for day in days]
    assert sorted(DailyPar.objects.values_list("deal__date", flat=True)) == sorted(days)
    for day in days:
        par = DailyPar.objects.get(deal__date=day)
        assert computed[day.isoformat()] == par.result == replay_line(_revealed(day), par.moves).result


@pytest.mark.django_db
def test_a_day_whose_search_fails_does_not_hold_back_the_older_days(
    daily_clock: Clock, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken, older = TODAY, TODAY - timedelta(days=1)
    for day in (broken, older):
        services.daily_deal_get_or_create(day=day)
    daily_clock.set(DEADLINE)
    search = par_search

    def failing_on_the_newest(revealed: RevealedDeal, *, node_budget: int) -> Par:
        if revealed == _revealed(broken):
            raise RuntimeError("the line found scores differently on replay")
        return search(revealed, node_budget=node_budget)

    monkeypatch.setattr(services, "par_search", failing_on_the_newest)

    computed = services.daily_pars_compute_due()

    assert computed[broken] is None
    assert computed[older] == DailyPar.objects.get(deal__date=older).result
    assert not DailyPar.objects.filter(deal__date=broken).exists()
    assert "computing the par of 2026-03-05 failed" in caplog.text


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_workers_at_once_store_one_par_and_the_second_leaves_the_held_day(
    daily_clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    deal = services.daily_deal_get_or_create(day=TODAY)
    daily_clock.set(DEADLINE)
    searching, release = threading.Event(), threading.Event()

    def slow_search(revealed: RevealedDeal, *, node_budget: int) -> Par:
        searching.set()
        assert release.wait(30)
        return par_search(revealed, node_budget=node_budget)

    monkeypatch.setattr(services, "par_search", slow_search)
    results: list[DailyPar | None] = []
    errors: list[Exception] = []

    def first_worker() -> None:
        try:
            results.append(services.daily_par_compute(deal=DailyDeal.objects.get(pk=deal.pk)))
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=first_worker)
    thread.start()
    try:
        assert searching.wait(30)
        # The second worker finds the day held and moves on at once, storing nothing.
        assert services.daily_pars_compute_due() == {TODAY: None}
        assert not DailyPar.objects.exists()
    finally:
        release.set()
        thread.join()
    assert errors == []
    [stored] = results
    assert stored is not None
    assert list(DailyPar.objects.values_list("id", flat=True)) == [stored.id]
    # Once the first is done, a run finds nothing due.
    assert services.daily_pars_compute_due() == {}


# --- a ranked player's line ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_ranked_players_line_that_beats_the_search_becomes_par(
    daily_clock: Clock, make_player: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    settings.DAILY_SECRET = "par-1"  # a deal whose search line goes out within the small budget
    deal = services.daily_deal_get_or_create(day=TODAY)
    revealed = daily_deal_revealed(deal=deal)
    good_line = [move.to_json() for move in par_search(revealed, node_budget=SMALL_BUDGET).moves]
    weak = _weak_search(revealed, node_budget=SMALL_BUDGET)
    player, client = make_player("Ada")
    submission = Submission.objects.get(attempt=_play_ranked(player, good_line))
    assert submission.result > weak.result  # the premise: the player beat the (weakened) search
    ranked_submission(deal, name="Bo", result=submission.result - 5, turns=4, finished_at=NOON)
    monkeypatch.setattr(services, "par_search", _weak_search)
    daily_clock.set(DEADLINE)

    par = services.daily_par_compute(deal=deal)

    assert par is not None
    assert (par.method, par.submission_id) == (DailyPar.Method.PLAYER, submission.id)
    assert (par.result, par.turns, par.finished) == (submission.result, submission.turns, True)
    assert par.moves == good_line
    assert par.search_result == weak.result
    board = client.get(f"/api/v1/daily/{TODAY}/leaderboard").json()
    assert (board["par"], board["par_reached"]) == (submission.result, 1)
    assert [entry["vs_par"] for entry in board["items"]] == [0, -5]
    replay = client.get(f"/api/v1/daily/{TODAY}/par").json()
    assert replay["par"]["method"] == "player"
    assert [step["move"] for step in replay["steps"] if step["seat"] == 0] == good_line


@pytest.mark.django_db
def test_a_ranked_attempt_closed_at_the_deadline_above_the_search_becomes_par_as_it_stood(
    daily_clock: Clock, make_player: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    deal = services.daily_deal_get_or_create(day=TODAY)
    revealed = daily_deal_revealed(deal=deal)
    good_line = [move.to_json() for move in par_search(revealed, node_budget=SMALL_BUDGET).moves]
    # One move short of going out: the hand is left in play and closed at the deadline as it stands.
    stopped = good_line[:-1]
    player, _ = make_player("Ada")
    attempt = _play_ranked(player, stopped)
    monkeypatch.setattr(services, "par_search", _weak_search)
    daily_clock.set(DEADLINE)

    par = services.daily_par_compute(deal=deal)

    closed = Submission.objects.get(attempt=attempt)
    assert closed.closed
    assert closed.result > _weak_search(revealed, node_budget=SMALL_BUDGET).result  # the premise
    assert par is not None
    assert (par.method, par.submission_id, par.finished) == (DailyPar.Method.PLAYER, closed.id, False)
    assert (par.result, par.turns, par.moves) == (closed.result, closed.turns, stopped)


@pytest.mark.django_db
def test_a_recorded_result_whose_line_does_not_replay_to_it_never_becomes_par(
    daily_clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    deal = services.daily_deal_get_or_create(day=TODAY)
    # A result the server holds no moves for (the game row is a stub): it cannot be verified.
    ranked_submission(deal, name="Bo", result=99, turns=3, finished_at=NOON)
    daily_clock.set(DEADLINE)

    par = services.daily_par_compute(deal=deal)

    assert par is not None and par.method != DailyPar.Method.PLAYER
    assert par.result == par.search_result < 99
    assert "replays to" in caplog.text


@pytest.mark.django_db
def test_computing_again_keeps_the_better_par(daily_clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    deal = services.daily_deal_get_or_create(day=TODAY)
    daily_clock.set(DEADLINE)
    first = services.daily_par_compute(deal=deal)
    assert first is not None
    monkeypatch.setattr(services, "par_search", _weak_search)
    again = services.daily_par_compute(deal=deal, again=True)
    assert again is not None
    assert (again.id, again.result, again.moves) == (first.id, first.result, first.moves)


@pytest.mark.django_db
def test_a_better_par_found_again_is_announced_again_and_the_same_one_not(
    daily_clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    deal = services.daily_deal_get_or_create(day=TODAY)
    daily_clock.set(DEADLINE)
    monkeypatch.setattr(services, "par_search", _weak_search)
    weak = services.daily_par_compute(deal=deal)
    assert weak is not None
    assert services.daily_par_compute(deal=deal, again=True) is not None
    monkeypatch.setattr(services, "par_search", par_search)
    better = services.daily_par_compute(deal=deal, again=True)
    assert better is not None and better.result > weak.result
    told = PersonBroadcast.objects.filter(type="daily_par").order_by("seq")
    assert [row.data for row in told] == [
        {"date": TODAY.isoformat(), "par": weak.result},
        {"date": TODAY.isoformat(), "par": better.result},
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("rows_lock", [True, False], ids=["rows locked", "whole database locked"])
def test_the_search_holds_the_days_row_but_never_a_whole_database_lock(
    rows_lock: bool, daily_clock: Clock, monkeypatch: pytest.MonkeyPatch, make_player: Callable[..., Any]
) -> None:
    # Where a write locks the whole database (SQLite), the search runs before the transaction that stores it,
    # so that no other write waits for it; where rows lock (PostgreSQL), inside it, holding the day's row.
    deal = services.daily_deal_get_or_create(day=TODAY)
    player, _ = make_player()
    services.attempt_start(player=player, day=TODAY)
    daily_clock.set(DEADLINE)
    monkeypatch.setattr(services, "_rows_lock", lambda: rows_lock)
    in_transaction: list[bool] = []
    # The test's own transaction is open throughout: the service's is a savepoint within it.
    depth = len(connection.savepoint_ids)

    def search(deal: RevealedDeal, *, node_budget: int) -> Par:
        in_transaction.append(len(connection.savepoint_ids) > depth)
        return par_search(deal, node_budget=node_budget)

    monkeypatch.setattr(services, "par_search", search)
    par = services.daily_par_compute(deal=deal)
    assert par is not None and in_transaction == [rows_lock]
    assert services.daily_par_compute(deal=deal) == par and in_transaction == [rows_lock]
    monkeypatch.setattr(services, "par_search", _weak_search)
    again = services.daily_par_compute(deal=deal, again=True)
    assert again is not None and (again.id, again.result, again.moves) == (par.id, par.result, par.moves)
    assert DailyPar.objects.count() == 1


# --- the API ------------------------------------------------------------------------------------------------


def _par_free(body: Any) -> None:
    """Fails if any par member of a response has a value."""
    if isinstance(body, dict):
        for key, value in body.items():
            if key in {"par", "vs_par", "par_reached"}:
                assert value is None, (key, value)
            _par_free(value)
    elif isinstance(body, list):
        for item in body:
            _par_free(item)


@pytest.mark.django_db
def test_before_the_reveal_no_response_reads_or_shows_par_even_if_one_were_stored(
    daily_clock: Clock, make_player: Callable[..., Any]
) -> None:
    deal = services.daily_deal_get_or_create(day=TODAY)
    player, client = make_player("Ada")
    ranked_submission(deal, name="Ada", result=7, turns=5, finished_at=NOON, player=player)
    # A par row that should not exist yet: the reads must not even look for it.
    DailyPar.objects.create(
        deal=deal,
        result=30,
        turns=4,
        finished=True,
        moves=[],
        method="beam",
        node_budget=1,
        nodes=1,
        search_result=30,
        computed_at=NOON,
    )
    daily_clock.set(DEADLINE - timedelta(seconds=1))
    urls = [
        "/api/v1/daily",
        f"/api/v1/daily/{TODAY}",
        f"/api/v1/daily/{TODAY}/leaderboard",
        f"/api/v1/daily/{TODAY}/leaderboard/me",
        "/api/v1/players/me/daily",
    ]
    with CaptureQueriesContext(connection) as queries:
        bodies = [client.get(url).json() for url in urls]
        refused = client.get(f"/api/v1/daily/{TODAY}/par")
    assert not any(DailyPar._meta.db_table in query["sql"] for query in queries.captured_queries)
    for body in bodies:
        _par_free(body)
    assert bodies[4]["share_text"] == "Kings Corner Daily #64: +7 · rank 1 of 1"
    assert (refused.status_code, refused.json()["code"]) == (404, "par_not_ready")
    assert "published once its seed is revealed" in refused.json()["detail"]


@pytest.mark.django_db
def test_after_the_reveal_every_result_is_shown_against_par(
    daily_clock: Clock, make_player: Callable[..., Any]
) -> None:
    deal = services.daily_deal_get_or_create(day=TODAY)
    player, client = make_player("Ada")
    ranked_submission(deal, name="Ada", result=-4, turns=5, finished_at=NOON, player=player)
    ranked_submission(deal, name="Bo", result=-9, turns=6, finished_at=NOON)
    daily_clock.set(DEADLINE)
    not_yet = client.get(f"/api/v1/daily/{TODAY}/par")
    assert (not_yet.status_code, not_yet.json()["code"]) == (404, "par_not_ready")
    assert "shortly after its seed is revealed" in not_yet.json()["detail"]
    assert client.get(f"/api/v1/daily/{TODAY}").json()["par"] is None

    par = services.daily_par_compute(deal=deal)
    assert par is not None and par.result > -4

    day = client.get(f"/api/v1/daily/{TODAY}").json()
    assert day["par"] == {
        "result": par.result,
        "turns": par.turns,
        "finished": par.finished,
        "method": par.method,
        "node_budget": SMALL_BUDGET,
        "nodes": par.nodes,
        "computed_at": "2026-03-06T01:00:00Z",
    }
    board = client.get(f"/api/v1/daily/{TODAY}/leaderboard").json()
    assert (board["par"], board["par_reached"]) == (par.result, 0)
    assert [entry["vs_par"] for entry in board["items"]] == [-4 - par.result, -9 - par.result]
    me = client.get(f"/api/v1/daily/{TODAY}/leaderboard/me").json()
    assert (me["par"], me["vs_par"], me["par_reached"]) == (par.result, -4 - par.result, 0)
    history = client.get("/api/v1/players/me/daily").json()
    assert (history["history"][0]["par"], history["history"][0]["vs_par"]) == (par.result, -4 - par.result)
    assert history["share_text"] == f"Kings Corner Daily #64: -4 · par {par.result:+d} · rank 1 of 2"


@pytest.mark.django_db
def test_the_replay_steps_through_the_par_line_showing_only_what_the_player_saw(
    daily_clock: Clock,
) -> None:
    deal = services.daily_deal_get_or_create(day=TODAY)
    daily_clock.set(DEADLINE)
    par = services.daily_par_compute(deal=deal)
    assert par is not None
    body = APIClient().get(f"/api/v1/daily/{TODAY}/par").json()
    assert (body["date"], body["seed"], body["par"]["result"]) == ("2026-03-05", deal.seed, par.result)

    def seen(state: State) -> dict[str, Any]:
        view = observe(state, 0)
        return {
            "current_seat": view["current_seat"],
            "hand": view["hand"],
            "hand_counts": view["hand_counts"],
            "table": {"stock": view["stock"], "piles": view["piles"]},
        }

    def hidden(state: State) -> set[str]:
        """The cards seat 0 cannot see: the other hands and the stock."""
        return {card for seat in (1, 2, 3) for card in state.hands[seat]} | set(state.stock)

    state = dealt(_revealed(TODAY))
    assert body["start"] == seen(state)
    for number, played in enumerate(body["steps"]):
        view = {key: played[key] for key in ("current_seat", "hand", "hand_counts", "table")}
        shown = set(view["hand"]) | {card for pile in view["table"]["piles"].values() for card in pile}
        state = step(state, parse_move(played["move"]), seat=played["seat"])[0]
        assert view == seen(state), number
        assert shown.isdisjoint(hidden(state)), number
    assert [step["move"] for step in body["steps"] if step["seat"] == 0] == par.moves
    assert outcome_of(state) == (par.result, par.turns)
    assert Game.objects.count() == 0  # the replay is computed, never played as a game


# --- the command --------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_command_refuses_a_day_whose_seed_is_not_revealed(daily_clock: Clock) -> None:
    with pytest.raises(CommandError, match="not revealed"):
        call_command("daily_par", "--date", TODAY.isoformat(), stdout=io.StringIO(), stderr=io.StringIO())
    assert not DailyPar.objects.exists()


@pytest.mark.django_db
def test_the_command_computes_a_day_or_the_last_days_with_a_progress_bar(daily_clock: Clock) -> None:
    daily_clock.set(DEADLINE + timedelta(days=1))
    out, err = io.StringIO(), io.StringIO()
    call_command("daily_par", "--date", TODAY.isoformat(), stdout=out, stderr=err)
    par = DailyPar.objects.get(deal__date=TODAY)
    assert out.getvalue().startswith(f"2026-03-05: par {par.result:+d} in {par.turns} turns")
    assert "[" + "#" * 30 + "] 1/1" in err.getvalue()

    out, err = io.StringIO(), io.StringIO()
    call_command("daily_par", "--days", "3", stdout=out, stderr=err)
    days = [TODAY + timedelta(days=1), TODAY, TODAY - timedelta(days=1)]
    assert [line.split(":")[0] for line in out.getvalue().splitlines()] == [day.isoformat() for day in days]
    assert sorted(DailyPar.objects.values_list("deal__date", flat=True)) == sorted(days)
    assert "3/3" in err.getvalue()
    assert DailyPar.objects.get(deal__date=TODAY).id == par.id
