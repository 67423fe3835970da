"""Attempts at a daily deal: which are ranked, the race for the ranked one, hints, and the submission the
server records when a ranked hand ends."""

import threading
import time
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.test import Client

from daily import services
from daily.errors import HintsRefusedInRankedAttempt
from daily.models import Attempt, DailyDeal, ResultCount, Submission
from games import hooks
from games.engine import State, daily_result
from games.models import Game
from games.services import player_create
from kingscorner.domain import DomainError
from tests.support.daily import TODAY, Clock, MakePlayer, play_to_the_end
from tests.support.problems import assert_problem
from tests.support.races import race, split


@pytest.mark.django_db
def test_the_first_attempt_at_today_is_ranked_and_later_ones_are_practice(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    first = client.post(f"/api/v1/daily/{TODAY}/attempts")
    game = first.json()["game"]
    stored = Game.objects.get(id=game["id"])
    play_to_the_end(stored)
    second = client.post(f"/api/v1/daily/{TODAY}/attempts")
    assert first.status_code == second.status_code == 201
    assert (first.json()["ranked"], second.json()["ranked"]) == (True, False)
    assert game["id"] != second.json()["game"]["id"]
    deal = DailyDeal.objects.get(date=TODAY)
    stored = Game.objects.get(id=second.json()["game"]["id"])
    assert stored.seed == deal.seed
    assert stored.target_score is None
    assert [(o["name"], o["level"]) for o in stored.opponents] == [
        ("Millie", "normal"),
        ("Roy", "normal"),
        ("Bess", "normal"),
    ]
    assert State.from_json(stored.state).current_seat == 0


@pytest.mark.django_db
def test_every_player_gets_the_same_cards(daily_clock: Clock, make_player: MakePlayer) -> None:
    hands = []
    for name in ("Ada", "Bo"):
        _, client = make_player(name)
        game_id = client.post(f"/api/v1/daily/{TODAY}/attempts").json()["game"]["id"]
        state = State.from_json(Game.objects.get(id=game_id).state)
        hands.append((state.hands, state.piles, state.stock))
    assert hands[0] == hands[1]


@pytest.mark.django_db
def test_an_abandoned_ranked_attempt_stays_the_ranked_one(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    first = client.post(f"/api/v1/daily/{TODAY}/attempts").json()
    # Until the day's finishing deadline, the unfinished ranked attempt bars any other at the deal.
    for now in (datetime(2026, 3, 5, 23, 0, tzinfo=UTC), datetime(2026, 3, 6, 0, 59, tzinfo=UTC)):
        daily_clock.set(now)
        assert_problem(client.post(f"/api/v1/daily/{TODAY}/attempts"), 409, "ranked_attempt_open")
    daily_clock.set(datetime(2026, 3, 6, 1, 0, tzinfo=UTC))
    again = client.post(f"/api/v1/daily/{TODAY}/attempts")
    assert (again.status_code, again.json()["ranked"]) == (201, False)
    assert again.json()["game"]["hand"] == first["game"]["hand"]
    assert Attempt.objects.filter(player=player, ranked=True).count() == 1


@pytest.mark.django_db
def test_attempts_at_past_days_are_unranked_archive_play(daily_clock: Clock, make_player: MakePlayer) -> None:
    player, client = make_player()
    response = client.post("/api/v1/daily/2026-03-01/attempts")
    assert response.status_code == 201
    assert response.json()["ranked"] is False
    assert client.post(f"/api/v1/daily/{TODAY}/attempts").json()["ranked"] is True


@pytest.mark.django_db
def test_an_attempt_at_a_today_already_over_is_practice(
    daily_clock: Clock, make_player: MakePlayer, settings: Any
) -> None:
    """With a finishing grace below minus the hours left until midnight (docs/operations.md's recipe for
    seeing a day end), today's deadline has passed: an attempt at it is practice, never a ranked attempt
    that would be expired as it starts."""
    settings.DAILY_FINISH_GRACE_SECONDS = -13 * 3600  # the clock is at noon: today ended at 11:00
    player, client = make_player()
    response = client.post(f"/api/v1/daily/{TODAY}/attempts")
    assert response.status_code == 201, response.content
    assert response.json()["ranked"] is False
    assert response.json()["game"]["status"] == "playing"
    assert not Attempt.objects.filter(player=player, ranked=True).exists()


@pytest.mark.django_db
def test_attempts_need_a_token_a_started_day_and_a_well_formed_date(
    daily_clock: Clock, make_player: MakePlayer, client: Client
) -> None:
    _, player_client = make_player()
    assert_problem(client.post(f"/api/v1/daily/{TODAY}/attempts"), 401, "not_authenticated")
    assert_problem(
        player_client.post(f"/api/v1/daily/{TODAY + timedelta(days=1)}/attempts"), 404, "no_daily_deal"
    )
    assert_problem(player_client.post("/api/v1/daily/2025-12-31/attempts"), 404, "no_daily_deal")
    for malformed in ("2026-3-5", "2026-02-30", "today", "20260305"):
        assert_problem(player_client.post(f"/api/v1/daily/{malformed}/attempts"), 400, "invalid_date")
    assert not Attempt.objects.exists()


@pytest.mark.django_db
def test_the_database_allows_one_ranked_attempt_per_player_and_day(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, _ = make_player()
    attempt = services.attempt_start(player=player, day=TODAY)
    with pytest.raises(IntegrityError), transaction.atomic():
        Attempt.objects.create(
            player=player,
            deal=attempt.deal,
            game=services.attempt_start(player=player, day=date(2026, 3, 1)).game,
            ranked=True,
            started_at=attempt.started_at,
        )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_parallel_first_attempts_yield_exactly_one_ranked_one_and_practice(daily_clock: Clock) -> None:
    player, _ = player_create(name="Racer")
    services.daily_deal_get_or_create(day=TODAY)
    workers = 6
    outcomes, errors = split(race(workers, lambda: services.attempt_start(player=player, day=TODAY).ranked))
    refusals = [(error.code, error.detail) for error in errors if isinstance(error, DomainError)]
    errors = [error for error in errors if not isinstance(error, DomainError)]
    # One ranked attempt; every other start saw it open and was refused, leaving nothing behind.
    assert errors == [] and outcomes == [True]
    assert [code for code, _ in refusals] == ["ranked_attempt_open"] * (workers - 1)
    assert Attempt.objects.filter(player=player).count() == 1
    assert Game.objects.filter(player=player).count() == 1


@pytest.mark.django_db
def test_hints_are_refused_while_the_ranked_attempt_is_unfinished(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, _ = make_player()
    ranked = services.attempt_start(player=player, day=TODAY)
    # Practice at the same deal beside the open ranked attempt (started before such starts were refused)
    # gets no hints either.
    deal = ranked.deal
    game = services.daily_game_create(player=player, deal=deal)
    beside = Attempt.objects.create(
        player=player, deal=deal, game=game, ranked=False, started_at=ranked.started_at
    )
    for game in (ranked.game, beside.game):
        with pytest.raises(HintsRefusedInRankedAttempt):
            hooks.check_hint_allowed(game)
    play_to_the_end(ranked.game)
    hooks.check_hint_allowed(ranked.game)
    hooks.check_hint_allowed(beside.game)


@pytest.mark.django_db
def test_no_other_attempt_at_a_deal_starts_while_the_ranked_one_is_unfinished(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    """The review's oracle: practice at today's deal beside the open ranked attempt showed the ranked game's
    future draws and, at hand_over, all four hands."""
    player, client = make_player()
    ranked = client.post(f"/api/v1/daily/{TODAY}/attempts").json()
    assert_problem(client.post(f"/api/v1/daily/{TODAY}/attempts"), 409, "ranked_attempt_open")
    assert Attempt.objects.filter(player=player).count() == 1
    # Archive play at another day's deal stays open, and so does practice once the ranked attempt is done.
    assert client.post("/api/v1/daily/2026-03-01/attempts").status_code == 201
    play_to_the_end(Game.objects.get(id=ranked["game"]["id"]), client)
    practice = client.post(f"/api/v1/daily/{TODAY}/attempts")
    assert (practice.status_code, practice.json()["ranked"]) == (201, False)


@pytest.mark.django_db
def test_the_hint_endpoint_answers_403_during_the_ranked_attempt(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    ranked = client.post(f"/api/v1/daily/{TODAY}/attempts").json()
    assert_problem(
        client.get(f"/api/v1/games/{ranked['game']['id']}/hint"), 403, "hints_refused_in_ranked_attempt"
    )
    play_to_the_end(Game.objects.get(id=ranked["game"]["id"]), client)
    practice = client.post(f"/api/v1/daily/{TODAY}/attempts").json()
    assert client.get(f"/api/v1/games/{practice['game']['id']}/hint").status_code == 200


@pytest.mark.django_db
def test_a_ranked_hand_over_records_the_submission_in_the_same_transaction(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, _ = make_player()
    attempt = services.attempt_start(player=player, day=TODAY)
    daily_clock.set(datetime(2026, 3, 5, 12, 30, tzinfo=UTC))
    game = play_to_the_end(attempt.game)
    state = State.from_json(game.state)
    submission = Submission.objects.get(attempt=attempt)
    assert submission.result == daily_result(state, 0)
    assert submission.turns == state.hand_results[-1]["turns_taken"][0] > 0
    assert submission.finished_at == datetime(2026, 3, 5, 12, 30, tzinfo=UTC)
    assert (submission.deal_id, submission.player_id) == (attempt.deal_id, player.id)
    assert ResultCount.objects.get(deal=attempt.deal, result=submission.result).count == 1


@pytest.mark.django_db
def test_practice_and_archive_hands_are_not_submitted(daily_clock: Clock, make_player: MakePlayer) -> None:
    player, _ = make_player()
    archive = services.attempt_start(player=player, day=date(2026, 3, 1))
    play_to_the_end(archive.game)
    assert not Submission.objects.exists()
    ranked = services.attempt_start(player=player, day=TODAY)
    play_to_the_end(ranked.game)
    practice = services.attempt_start(player=player, day=TODAY)
    play_to_the_end(practice.game)
    assert list(Submission.objects.values_list("attempt_id", flat=True)) == [ranked.id]
    assert list(ResultCount.objects.values_list("count", flat=True)) == [1]


@pytest.mark.django_db
def test_a_ranked_attempt_finished_after_midnight_counts_for_the_day_it_started(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, _ = make_player()
    daily_clock.set(datetime(2026, 3, 5, 23, 59, tzinfo=UTC))
    attempt = services.attempt_start(player=player, day=TODAY)
    daily_clock.set(datetime(2026, 3, 6, 0, 3, tzinfo=UTC))
    play_to_the_end(attempt.game)
    submission = Submission.objects.get(player=player)
    assert submission.deal.date == TODAY
    assert submission.finished_at == datetime(2026, 3, 6, 0, 3, tzinfo=UTC)


def _start_racing_a_ranked_start(
    daily_clock: Clock, *, finish_the_ranked_one: bool = False, second_at: datetime | None = None
) -> list[object]:
    """Starts the ranked attempt at TODAY in a transaction held open while another thread starts an attempt
    at the same deal (at `second_at` if given); what that thread got, an attempt or an error."""
    player, _ = player_create(name="Racer")
    services.daily_deal_get_or_create(day=TODAY)
    first_inserted = threading.Event()
    second: list[object] = []

    def start_second() -> None:
        try:
            first_inserted.wait()
            # This start waits on the first transaction, then sees what it committed.
            second.append(services.attempt_start(player=player, day=TODAY))
        except Exception as error:
            second.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=start_second)
    thread.start()
    with transaction.atomic():
        first = services.attempt_start(player=player, day=TODAY)
        if finish_the_ranked_one:
            play_to_the_end(first.game)
        if second_at is not None:
            daily_clock.set(second_at)
        first_inserted.set()
        time.sleep(0.5)
    thread.join()
    assert first.ranked is True
    return second


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_start_that_loses_the_race_to_an_open_ranked_one_is_refused_and_leaves_nothing(
    daily_clock: Clock,
) -> None:
    [refused] = _start_racing_a_ranked_start(daily_clock)
    assert isinstance(refused, DomainError) and refused.code == "ranked_attempt_open"
    assert Attempt.objects.count() == Game.objects.count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_start_that_loses_the_race_to_a_finished_ranked_one_is_practice(daily_clock: Clock) -> None:
    [practice] = _start_racing_a_ranked_start(daily_clock, finish_the_ranked_one=True)
    assert isinstance(practice, Attempt) and practice.ranked is False


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_attempt_at_yesterday_just_after_midnight_is_refused_beside_a_ranked_one_open_since_just_before(
    daily_clock: Clock,
) -> None:
    daily_clock.set(datetime(2026, 3, 5, 23, 59, 59, tzinfo=UTC))
    # The second start is at yesterday's deal, whose ranked attempt may be finished until the deadline.
    [refused] = _start_racing_a_ranked_start(daily_clock, second_at=datetime(2026, 3, 6, 0, 0, 1, tzinfo=UTC))
    assert isinstance(refused, DomainError) and refused.code == "ranked_attempt_open"
    assert Attempt.objects.filter(ranked=True).count() == Attempt.objects.count() == 1


@pytest.mark.django_db
def test_a_lost_ranked_insert_becomes_practice(
    daily_clock: Clock, make_player: MakePlayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database's one ranked attempt per player and day stands behind the player lock (SQLite has
    none): a start that missed the winner's row before its insert becomes practice at the conflict."""
    player, _ = make_player()
    winner = services.attempt_start(player=player, day=TODAY)
    monkeypatch.setattr(services, "_has_ranked_attempt", lambda **kwargs: False)
    assert services.attempt_start(player=player, day=TODAY).ranked is False
    assert Attempt.objects.filter(player=player, ranked=True).get() == winner


@pytest.mark.django_db
def test_the_attempts_game_is_the_game_view_of_games_with_the_deal_in_its_events(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    _, client = make_player()
    game = client.post(f"/api/v1/daily/{TODAY}/attempts").json()["game"]
    created = client.post("/api/v1/games", {}, format="json").json()
    assert set(game) == set(created)
    # As POST /games does, the new game's events are the deal and what happened before the player's turn.
    assert [event["type"] for event in game["events"]][:2] == ["deal", "turn_start"]
    since_start = client.get(f"/api/v1/games/{game['id']}", {"since_version": 0}).json()
    assert game == since_start
    assert game["seed"] is None
    response = client.post("/api/v1/daily/2026-03-01/attempts")
    assert response["ETag"] == f'"{response.json()["game"]["version"]}"'


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "content_type", "status", "code"),
    [
        ("hello", "text/plain", 415, "unsupported_media_type"),
        ('{"ranked": false}', "application/json", 400, "invalid_request"),
        ("[]", "application/json", 400, "invalid_request"),
        ("null", "application/json", 400, "invalid_request"),
        ("{", "application/json", 400, "malformed_json"),
    ],
)
def test_an_attempt_refuses_any_body_but_none_or_an_empty_object_and_starts_nothing(
    daily_clock: Clock, make_player: MakePlayer, body: str, content_type: str, status: int, code: str
) -> None:
    _, client = make_player()
    response = client.generic("POST", f"/api/v1/daily/{TODAY}/attempts", body, content_type=content_type)
    assert_problem(response, status, code)
    assert not Attempt.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(("body", "content_type"), [("", "application/json"), ("{}", "application/json")])
def test_an_attempt_takes_no_body_or_an_empty_object(
    daily_clock: Clock, make_player: MakePlayer, body: str, content_type: str
) -> None:
    _, client = make_player()
    response = client.generic("POST", f"/api/v1/daily/{TODAY}/attempts", body, content_type=content_type)
    assert response.status_code == 201 and response.json()["ranked"] is True
