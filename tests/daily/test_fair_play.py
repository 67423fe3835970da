"""Fair play in the daily deal: a ranked attempt may be finished until its day's finishing deadline (the next
UTC midnight plus the grace period), when the day's seed is revealed; one still open then is closed as it
stands, exactly once, by the beat job, while the API's reads, which never write, show it closed from the
deadline on."""

import io
import json
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from pytest_django import Settings
from rest_framework.test import APIClient

from daily import clock, services
from daily.models import Attempt, DailyDeal, ResultCount, Submission
from daily.tasks import daily_attempts_close
from games import selectors as games_selectors
from games.engine import PILES, PLAYING, State, hand_penalty, make_rules
from games.engine.players import best_spot
from games.models import Game, Player
from games.services import game_create, game_moves_apply, player_create
from games.services import moves as games_moves
from tests.support.daily import TODAY, Clock, MakePlayer, play_to_the_end
from tests.support.problems import assert_problem
from tests.support.races import race, split

MIDNIGHT = datetime(2026, 3, 6, 0, 0, tzinfo=UTC)
DEADLINE = datetime(2026, 3, 6, 1, 0, tzinfo=UTC)
JUST_BEFORE = DEADLINE - timedelta(microseconds=1)
NEXT_DAY_NOON = datetime(2026, 3, 6, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _a_long_hand(settings: Settings) -> None:
    """A secret whose deal of TODAY lasts five turns of seat 0, so that an attempt can be left open."""
    settings.DAILY_SECRET = "fair-play-50"


def _open_ranked(player: Player, turns: int = 2) -> Attempt:
    attempt = services.attempt_start(player=player, day=TODAY)
    game = play_to_the_end(attempt.game, turns=turns)
    assert game.status == PLAYING
    return attempt


def _as_it_stands(attempt: Attempt) -> tuple[int, int, int, datetime]:
    """The submission an attempt closed at the deadline must have: its game as it is now."""
    state = State.from_json(Game.objects.get(id=attempt.game_id).state)
    return attempt.id, -hand_penalty(state.hands[0]), state.turns_taken[0], DEADLINE


def _submissions() -> set[tuple[int, int, int, datetime]]:
    return set(Submission.objects.values_list("attempt_id", "result", "turns", "finished_at"))


def _counts_agree_with_submissions() -> None:
    counted = {
        (deal_id, result): count
        for deal_id, result, count in ResultCount.objects.values_list("deal_id", "result", "count")
    }
    recorded: dict[tuple[int, int], int] = {}
    for deal_id, result in Submission.objects.values_list("deal_id", "result"):
        recorded[deal_id, result] = recorded.get((deal_id, result), 0) + 1
    assert counted == recorded


# The deadline and the seed.


@pytest.mark.django_db
def test_the_finishing_deadline_is_the_next_midnight_plus_the_grace_setting(
    daily_clock: Clock, client: Client
) -> None:
    assert clock.finish_deadline(TODAY) == DEADLINE
    with override_settings(DAILY_FINISH_GRACE_SECONDS=600):
        assert clock.finish_deadline(TODAY) == MIDNIGHT + timedelta(minutes=10)
        assert client.get(f"/api/v1/daily/{TODAY}").json()["seed_revealed_at"] == "2026-03-06T00:10:00Z"
        daily_clock.set(MIDNIGHT + timedelta(minutes=10))
        assert client.get(f"/api/v1/daily/{TODAY}").json()["seed"] is not None
    with override_settings(DAILY_FINISH_GRACE_SECONDS=0):
        assert clock.finish_deadline(TODAY) == MIDNIGHT


@pytest.mark.django_db
def test_the_seed_stays_hidden_during_the_grace_window_and_appears_after_it(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    ranked = services.attempt_start(player=player, day=TODAY)
    play_to_the_end(ranked.game)
    seed = DailyDeal.objects.get(date=TODAY).seed
    paths = (
        f"/api/v1/daily/{TODAY}",
        f"/api/v1/games/{ranked.game_id}",
        f"/api/v1/games/{ranked.game_id}/events",
    )
    for moment in (MIDNIGHT, MIDNIGHT + timedelta(minutes=30), JUST_BEFORE):
        daily_clock.set(moment)
        for path in paths:
            assert seed not in client.get(path).content.decode(), (moment, path)
    daily_clock.set(DEADLINE)
    assert client.get(f"/api/v1/daily/{TODAY}").json()["seed"] == seed
    assert client.get(f"/api/v1/games/{ranked.game_id}").json()["seed"] == seed


# Finishing inside the grace period.


@pytest.mark.django_db
def test_an_attempt_finished_inside_the_grace_period_counts_for_its_day(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    daily_clock.set(datetime(2026, 3, 5, 23, 59, tzinfo=UTC))
    ranked = _open_ranked(player, turns=1)
    daily_clock.set(JUST_BEFORE)
    play_to_the_end(ranked.game, client)
    submission = Submission.objects.get(attempt=ranked)
    assert (submission.deal.date, submission.finished_at) == (TODAY, JUST_BEFORE)
    daily_clock.set(DEADLINE)
    board = client.get(f"/api/v1/daily/{TODAY}/leaderboard").json()
    assert [entry["player"]["id"] for entry in board["items"]] == [str(player.id)]
    assert client.get("/api/v1/daily/2026-03-06/leaderboard").json()["count"] == 0
    assert _submissions() == {(ranked.id, submission.result, submission.turns, JUST_BEFORE)}


# Closing at the deadline.


@pytest.mark.django_db
def test_the_beat_job_closes_open_ranked_attempts_as_they_stand_once(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    (ada, ada_client), (bo, bo_client), (cy, _) = (make_player(name) for name in ("Ada", "Bo", "Cy"))
    played = _open_ranked(ada, turns=2)
    untouched = _open_ranked(bo, turns=0)
    finished = services.attempt_start(player=cy, day=TODAY)
    play_to_the_end(finished.game)
    before = _submissions()
    expected = before | {_as_it_stands(played), _as_it_stands(untouched)}
    assert _as_it_stands(played)[2] == 2 and _as_it_stands(untouched)[2] == 0

    daily_clock.set(JUST_BEFORE)
    assert daily_attempts_close.delay().get() == {}
    assert _submissions() == before
    daily_clock.set(DEADLINE)
    assert daily_attempts_close.delay().get() == {"2026-03-05": 2}
    assert _submissions() == expected
    assert DailyDeal.objects.get(date=TODAY).attempts_closed_at == DEADLINE
    _counts_agree_with_submissions()

    daily_clock.set(DEADLINE + timedelta(minutes=5))
    assert daily_attempts_close.delay().get() == {}
    for client in (ada_client, bo_client):
        assert client.get(f"/api/v1/daily/{TODAY}/leaderboard").json()["count"] == 3
        assert client.get(f"/api/v1/daily/{TODAY}").json()["result"]["finished_at"] == "2026-03-06T01:00:00Z"
    assert _submissions() == expected
    _counts_agree_with_submissions()


READ_PATHS = {
    "today": "/api/v1/daily",
    "day": "/api/v1/daily/2026-03-05",
    "leaderboard": "/api/v1/daily/2026-03-05/leaderboard",
    "leaderboard_me": "/api/v1/daily/2026-03-05/leaderboard/me",
    "history": "/api/v1/players/me/daily",
}


def _writes(queries: CaptureQueriesContext) -> list[str]:
    return [
        query["sql"]
        for query in queries.captured_queries
        if query["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("path", READ_PATHS, ids=str)
def test_reads_past_the_deadline_write_nothing(
    daily_clock: Clock, make_player: MakePlayer, path: str
) -> None:
    player, client = make_player()
    _open_ranked(player)
    daily_clock.set(DEADLINE + timedelta(hours=1))
    # The one write a read may make, creating a missing deal, is not this test's subject.
    services.daily_deal_get_or_create(day=TODAY + timedelta(days=1))
    with CaptureQueriesContext(connection) as queries:
        response = client.get(READ_PATHS[path])
    assert response.status_code == 200, response.content
    assert _writes(queries) == []
    assert _submissions() == set()
    assert DailyDeal.objects.get(date=TODAY).attempts_closed_at is None


@pytest.mark.django_db
def test_reads_show_an_expired_attempt_as_the_job_will_record_it(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    bo, bo_client = make_player("Bo")
    cy, cy_client = make_player("Cy")
    ranked = _open_ranked(player)
    play_to_the_end(services.attempt_start(player=bo, day=TODAY).game)
    _open_ranked(cy, turns=1)
    _, result, turns, _ = _as_it_stands(ranked)
    daily_clock.set(DEADLINE)

    closing = {"result": result, "turns": turns, "finished_at": "2026-03-06T01:00:00Z", "closed": True}
    standing = client.get(f"/api/v1/daily/{TODAY}").json()["result"]
    assert standing.items() >= closing.items()
    me = client.get(f"/api/v1/daily/{TODAY}/leaderboard/me").json()
    # Par is not computed before the close job has run: it is null until then.
    assert (me["par"], me["vs_par"], me["par_reached"]) == (None, None, None)
    assert standing.items() >= {key: me[key] for key in me.keys() - {"par", "vs_par", "par_reached"}}.items()
    [day] = client.get("/api/v1/players/me/daily").json()["history"]
    assert (day["result"], day["closed"], day["rank"], day["count"]) == (result, True, standing["rank"], 3)
    # Every view of the closing day counts the three ranked attempts, the two not recorded yet included
    # (the board lists only what is recorded): nobody reads "rank 2 of 3" beside a board of 1.
    board = client.get(f"/api/v1/daily/{TODAY}/leaderboard").json()
    assert (board["status"], board["count"], len(board["items"])) == ("closing", 3, 1)
    assert me["count"] == standing["count"] == 3
    assert cy_client.get(f"/api/v1/daily/{TODAY}/leaderboard/me").json()["count"] == 3
    # Bo's recorded finish too: on the day's view, leaderboard/me and the history.
    assert bo_client.get(f"/api/v1/daily/{TODAY}").json()["result"]["count"] == 3
    assert bo_client.get(f"/api/v1/daily/{TODAY}/leaderboard/me").json()["count"] == 3
    assert bo_client.get("/api/v1/players/me/daily").json()["history"][0]["count"] == 3

    assert daily_attempts_close.delay().get() == {"2026-03-05": 2}
    assert client.get(f"/api/v1/daily/{TODAY}").json()["result"] == standing
    assert client.get(f"/api/v1/daily/{TODAY}/leaderboard/me").json() == me
    board = client.get(f"/api/v1/daily/{TODAY}/leaderboard").json()
    assert (board["status"], board["count"]) == ("final", 3)
    [entry] = [entry for entry in board["items"] if entry["player"]["id"] == str(player.id)]
    assert entry["closed"] is True and entry["rank"] == standing["rank"]
    assert _as_it_stands(ranked) in _submissions()
    assert Submission.objects.get(attempt=ranked).closed is True
    _counts_agree_with_submissions()


@pytest.mark.django_db
def test_an_expired_ranked_game_shows_as_over_with_no_moves_and_refuses_its_hint(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    ranked = _open_ranked(player, turns=1)
    game_url = f"/api/v1/games/{ranked.game_id}"
    view = client.get(game_url).json()
    assert (view["status"], view["is_your_turn"], view["closed_reason"]) == ("playing", True, None)
    assert view["legal_moves"]
    assert [game["id"] for game in client.get("/api/v1/games?status=playing").json()["items"]] == [
        str(ranked.game_id)
    ]
    daily_clock.set(DEADLINE)
    for _ in range(2):  # before the job has closed the attempt, and after
        view = client.get(game_url).json()
        assert (view["status"], view["closed_reason"]) == ("finished", "attempt_expired")
        assert (view["is_your_turn"], view["current_seat"], view["legal_moves"]) == (False, None, [])
        assert_problem(client.get(f"{game_url}/hint"), 409, "attempt_expired")
        assert_problem(client.post(f"{game_url}/hands"), 409, "attempt_expired")
        [summary] = client.get("/api/v1/games?status=finished").json()["items"]
        assert (summary["status"], summary["closed_reason"], summary["is_your_turn"]) == (
            "finished",
            "attempt_expired",
            False,
        )
        assert client.get("/api/v1/games?status=playing").json()["items"] == []
        daily_attempts_close.delay()
    assert _submissions() == {_as_it_stands(ranked)}


@pytest.mark.django_db
def test_moves_in_a_ranked_game_past_the_deadline_are_refused_with_attempt_expired(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    ranked = _open_ranked(player, turns=1)
    daily_clock.set(JUST_BEFORE)
    play_to_the_end(ranked.game, client, turns=1)
    ranked.game.refresh_from_db()
    version = ranked.game.version
    daily_clock.set(DEADLINE)
    for _ in range(2):  # before the attempt is closed, then after
        response = client.post(
            f"/api/v1/games/{ranked.game_id}/moves", {"moves": [{"type": "end_turn"}]}, format="json"
        )
        assert_problem(response, 409, "attempt_expired")
        ranked.game.refresh_from_db()
        assert (ranked.game.version, ranked.game.status) == (version, PLAYING)
        daily_attempts_close.delay()
    assert _submissions() == {_as_it_stands(ranked)}
    # Games at the deal that are not ranked play on.
    archive = client.post(f"/api/v1/daily/{TODAY}/attempts").json()
    assert archive["ranked"] is False
    play_to_the_end(Game.objects.get(id=archive["game"]["id"]), client)


@pytest.mark.django_db
def test_a_move_read_before_the_deadline_and_written_after_the_closer_is_refused(
    daily_clock: Clock, make_player: MakePlayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Moves read the game without a lock: the deadline's guard looks again once the write holds the row,
    so a move that the closer overtook between its read and its write is rolled back, and the attempt stays
    closed as the player left it."""
    player, client = make_player()
    ranked = _open_ranked(player, turns=1)
    daily_clock.set(JUST_BEFORE)
    version = Game.objects.get(id=ranked.game_id).version
    view_of = games_selectors.game_view_of

    def closer_overtakes(**kwargs: Any) -> Any:
        daily_clock.set(DEADLINE)
        daily_attempts_close.delay()
        return view_of(**kwargs)

    # The services call game_view_of between the read and the write.
    monkeypatch.setattr(games_moves, "game_view_of", closer_overtakes)
    response = client.post(
        f"/api/v1/games/{ranked.game_id}/moves", {"moves": [{"type": "end_turn"}]}, format="json"
    )
    assert_problem(response, 409, "attempt_expired")
    game = Game.objects.get(id=ranked.game_id)
    assert (game.version, game.status) == (version, PLAYING)
    assert _submissions() == {_as_it_stands(ranked)}


@pytest.mark.django_db
def test_hints_stay_refused_through_the_grace_period_and_then_the_attempt_is_over(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    ranked = _open_ranked(player, turns=1)
    daily_clock.set(JUST_BEFORE)
    assert_problem(client.get(f"/api/v1/games/{ranked.game_id}/hint"), 403, "hints_refused_in_ranked_attempt")
    daily_clock.set(DEADLINE)
    assert_problem(client.get(f"/api/v1/games/{ranked.game_id}/hint"), 409, "attempt_expired")


# No practice beside an open ranked attempt: it would deal the same cards and show the ranked game's draws.


@pytest.mark.django_db
def test_no_practice_beside_an_open_ranked_attempt_until_its_deadline(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    _, other_client = make_player("Bo")
    ranked = _open_ranked(player, turns=1)
    assert_problem(client.post(f"/api/v1/daily/{TODAY}/attempts"), 409, "ranked_attempt_open")
    assert other_client.post(f"/api/v1/daily/{TODAY}/attempts").json()["ranked"] is True
    daily_clock.set(MIDNIGHT + timedelta(minutes=30))
    assert_problem(client.post(f"/api/v1/daily/{TODAY}/attempts"), 409, "ranked_attempt_open")
    assert client.post("/api/v1/daily/2026-03-06/attempts").json()["ranked"] is True
    assert Attempt.objects.filter(player=player, deal__date=TODAY, ranked=True).get() == ranked
    daily_clock.set(DEADLINE)
    practice = client.post(f"/api/v1/daily/{TODAY}/attempts")
    assert (practice.status_code, practice.json()["ranked"]) == (201, False)
    assert client.get(f"/api/v1/games/{practice.json()['game']['id']}/hint").status_code == 200
    assert client.get(f"/api/v1/daily/{TODAY}").json()["seed"] is not None
    daily_attempts_close.delay()
    assert _as_it_stands(ranked) in _submissions()


# A ranked attempt's game is never left: a computer would play on in the seat, and the attempt would stay open
# out of its player's reach until its deadline.


@pytest.mark.django_db
def test_a_ranked_attempts_game_cannot_be_left_open_or_finished_and_a_practice_game_can(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    ranked = _open_ranked(player, turns=1)
    game = Game.objects.get(id=ranked.game_id)
    seats_before = list(game.seats.order_by("seat").values_list("player_id", "name"))
    refused = client.post(f"/api/v1/games/{ranked.game_id}/leave")
    assert_problem(refused, 403, "leave_refused_in_ranked_attempt")
    # Nothing changed: the game is the player's, at its version, with the same seats.
    assert client.get(f"/api/v1/games/{ranked.game_id}").json()["version"] == game.version
    assert list(game.seats.order_by("seat").values_list("player_id", "name")) == seats_before
    play_to_the_end(Game.objects.get(id=ranked.game_id))
    finished = client.post(f"/api/v1/games/{ranked.game_id}/leave")
    assert_problem(finished, 403, "leave_refused_in_ranked_attempt")
    practice = client.post(f"/api/v1/daily/{TODAY}/attempts")
    assert (practice.status_code, practice.json()["ranked"]) == (201, False)
    assert client.post(f"/api/v1/games/{practice.json()['game']['id']}/leave").status_code == 204


# Races, on PostgreSQL.


@pytest.mark.django_db
def test_the_job_run_twice_closes_each_attempt_once_in_batches(daily_clock: Clock) -> None:
    attempts = [_open_ranked(player_create(name=f"p{index}")[0], turns=index % 3) for index in range(5)]
    expected = {_as_it_stands(attempt) for attempt in attempts}
    daily_clock.set(DEADLINE)
    deal = DailyDeal.objects.get(date=TODAY)
    batches: list[int] = []
    assert services.daily_deal_close(deal=deal, batch_size=2, on_batch=batches.append) == 5
    assert batches == [2, 2, 1]
    assert services.daily_deal_close(deal=DailyDeal.objects.get(date=TODAY), batch_size=2) == 0
    assert daily_attempts_close.delay().get() == {}
    assert _submissions() == expected
    _counts_agree_with_submissions()


@pytest.mark.django_db
def test_the_job_catches_up_on_every_missed_day_oldest_first(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, _ = make_player()
    first = _open_ranked(player)
    daily_clock.set(NEXT_DAY_NOON)
    second = services.attempt_start(player=player, day=TODAY + timedelta(days=1))
    assert second.ranked
    daily_clock.set(NEXT_DAY_NOON + timedelta(days=3))
    assert daily_attempts_close.delay().get() == {"2026-03-05": 1, "2026-03-06": 1}
    assert {row[0] for row in _submissions()} == {first.id, second.id}
    assert not DailyDeal.objects.filter(attempts_closed_at__isnull=True, date__lte=TODAY).exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_closers_running_at_once_split_the_day_and_record_each_attempt_once(daily_clock: Clock) -> None:
    attempts = [_open_ranked(player_create(name=f"p{index}")[0], turns=index % 3) for index in range(12)]
    expected = {_as_it_stands(attempt) for attempt in attempts}
    daily_clock.set(DEADLINE)
    closed, errors = split(
        race(4, lambda: services.daily_deal_close(deal=DailyDeal.objects.get(date=TODAY), batch_size=2))
    )
    assert errors == []
    assert sum(closed) == len(attempts)
    assert _submissions() == expected
    assert Submission.objects.count() == len(attempts)
    _counts_agree_with_submissions()
    services.daily_deals_close_due()
    assert DailyDeal.objects.get(date=TODAY).attempts_closed_at is not None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_move_accepted_just_before_the_deadline_counts_in_the_close_that_waits_for_it(
    daily_clock: Clock,
) -> None:
    player, _ = player_create(name="Late")
    ranked = _open_ranked(player, turns=1)
    daily_clock.set(JUST_BEFORE)
    closed: list[object] = []

    def close() -> None:
        try:
            closed.append(services.daily_deals_close_due())
        finally:
            connection.close()

    closer = threading.Thread(target=close)
    with transaction.atomic():
        state = State.from_json(Game.objects.get(id=ranked.game_id).state)
        assert state.current_seat == 0
        game_moves_apply(
            game_id=ranked.game_id, player=player, moves=[{"type": "end_turn"}], expected_version=None
        )
        daily_clock.set(DEADLINE)
        closer.start()
        time.sleep(0.5)  # the closer waits on the game row this transaction holds
        assert closed == []
    closer.join()
    assert closed == [{TODAY: 1}]
    [(_, _, turns, finished_at)] = _submissions()
    assert (turns, finished_at) == (2, DEADLINE)
    assert _submissions() == {_as_it_stands(ranked)}


@pytest.mark.django_db
def test_the_daily_hooks_cost_a_game_that_is_not_daily_no_query(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, _ = make_player()
    game = game_create(player=player, levels=["normal"], rules=make_rules("classic"), target_score=None)
    with CaptureQueriesContext(connection) as queries:
        game_moves_apply(game_id=game.id, player=player, moves=[{"type": "end_turn"}], expected_version=None)
    assert not [query["sql"] for query in queries if "daily_" in query["sql"]]


# The operator's command.


@pytest.mark.django_db
def test_the_close_command_closes_due_days_and_reports_each_batch(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, _ = make_player()
    ranked = _open_ranked(player)
    with pytest.raises(CommandError, match="is not over until"):
        call_command("daily_close", "--date", TODAY.isoformat())
    daily_clock.set(DEADLINE)
    out = io.StringIO()
    call_command("daily_close", "--json", "--batch-size", "1", stdout=out)
    report = json.loads(out.getvalue())
    assert list(report) == ["2026-03-05"]
    assert report["2026-03-05"]["closed"] == 1
    assert [batch["closed"] for batch in report["2026-03-05"]["batches"]] == [1]
    assert _submissions() == {_as_it_stands(ranked)}
    out = io.StringIO()
    call_command("daily_close", stdout=out)
    assert out.getvalue().strip() == "No day is due for closing."
    with pytest.raises(CommandError, match="YYYY-MM-DD"):
        call_command("daily_close", "--date", "2026-02-30")


# The server offers no help of sharp's during a ranked attempt: no analysis, and no sharp placement.


@pytest.mark.django_db
def test_analysis_is_refused_to_a_caller_whose_ranked_attempt_is_open(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    """The review's bypass: POST analysis returned sharp's turn for the ranked game's position."""
    player, client = make_player()
    position = {"hand": ["8H", "5H"], "piles": {"N": ["9S"]}}
    assert client.post("/api/v1/analysis", position, format="json").status_code == 200
    ranked = _open_ranked(player, turns=1)
    refused = client.post("/api/v1/analysis", position, format="json")
    assert_problem(refused, 403, "analysis_refused_in_ranked_attempt")
    # An anonymous caller cannot be tied to an attempt (the README says so).
    assert APIClient().post("/api/v1/analysis", position, format="json").status_code == 200
    play_to_the_end(Game.objects.get(id=ranked.game_id))
    assert client.post("/api/v1/analysis", position, format="json").status_code == 200


def _with_8h_to_place(game_id: str) -> None:
    """The game rewritten so that seat 0 holds 8H, which fits on N (9S), on E (9C) and in the empty sides."""
    game = Game.objects.get(id=game_id)
    state = game.state
    state["hands"][0] = ["8H", "2C"]
    state["piles"] = {name: [] for name in PILES} | {"N": ["9S"], "E": ["9C"]}
    game.state = State.from_json(state).to_json()
    game.save()


@pytest.mark.django_db
def test_a_play_without_to_in_a_ranked_attempt_goes_on_the_first_pile_that_takes_it_without_sharp(
    daily_clock: Clock, make_player: MakePlayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review's second bypass: a play without `to` in the ranked game ran sharp's placement."""
    _, client = make_player()
    game = client.post(f"/api/v1/daily/{TODAY}/attempts").json()["game"]
    _with_8h_to_place(game["id"])

    def sharp(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("sharp's placement ran in a ranked attempt")

    monkeypatch.setattr(games_moves, "best_spot", sharp)
    response = client.post(
        f"/api/v1/games/{game['id']}/moves", {"moves": [{"type": "play", "card": "8H"}]}, format="json"
    )
    assert response.status_code == 200, response.content
    [play] = response.json()["events"]
    assert (play["type"], play["card"], play["to"]) == ("play", "8H", "N")


@pytest.mark.django_db
def test_a_play_without_to_outside_a_ranked_attempt_still_goes_where_sharp_would_put_it(
    daily_clock: Clock, make_player: MakePlayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, client = make_player()
    game = client.post("/api/v1/daily/2026-03-01/attempts").json()["game"]
    _with_8h_to_place(game["id"])
    asked: list[str] = []
    sharp = best_spot

    def recording(rules: Any, hand: Any, piles: Any, card: str, **kwargs: Any) -> Any:
        asked.append(card)
        return sharp(rules, hand, piles, card, **kwargs)

    monkeypatch.setattr(games_moves, "best_spot", recording)
    response = client.post(
        f"/api/v1/games/{game['id']}/moves", {"moves": [{"type": "play", "card": "8H"}]}, format="json"
    )
    assert response.status_code == 200 and asked == ["8H"]
