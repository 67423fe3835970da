"""GET /daily and /daily/{date}: the deal of a day as the API shows it, and the seed kept secret until the
day is over for the leaderboard, at its finishing deadline."""

import json
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from daily import services
from daily.models import Attempt, DailyDeal
from games.selectors import game_view
from tests.support.daily import TODAY, Clock, MakePlayer, play_to_the_end


@pytest.mark.django_db
def test_today_shows_the_deal_with_its_commitment_and_no_seed(daily_clock: Clock, client: Client) -> None:
    daily_clock.set(datetime(2026, 3, 5, 23, 59, 30, 500000, tzinfo=UTC))
    body = client.get("/api/v1/daily").json()
    deal = DailyDeal.objects.get(date=TODAY)
    assert body == {
        "date": "2026-03-05",
        "number": 64,
        "rules": deal.rules,
        "opponents": [
            {"seat": 1, "name": "Millie", "level": "normal"},
            {"seat": 2, "name": "Roy", "level": "normal"},
            {"seat": 3, "name": "Bess", "level": "normal"},
        ],
        "commitment": deal.commitment,
        "seed": None,
        "seed_revealed_at": "2026-03-06T01:00:00Z",
        "next_deal_in": 30,
        "par": None,
    }
    assert client.get(f"/api/v1/daily/{TODAY}").json() == body


@pytest.mark.django_db
def test_a_past_day_reveals_its_seed_from_its_finishing_deadline(daily_clock: Clock, client: Client) -> None:
    body = client.get("/api/v1/daily/2026-03-04").json()
    deal = DailyDeal.objects.get(date="2026-03-04")
    assert (body["number"], body["seed"], body["commitment"]) == (63, deal.seed, deal.commitment)
    assert body["seed_revealed_at"] == "2026-03-05T01:00:00Z"
    for moment in (
        datetime(2026, 3, 6, 0, 0, tzinfo=UTC),
        datetime(2026, 3, 6, 0, 59, 59, 999999, tzinfo=UTC),
    ):
        daily_clock.set(moment)
        assert client.get(f"/api/v1/daily/{TODAY}").json()["seed"] is None
    daily_clock.set(datetime(2026, 3, 6, 1, 0, tzinfo=UTC))
    assert client.get(f"/api/v1/daily/{TODAY}").json()["seed"] == DailyDeal.objects.get(date=TODAY).seed


@pytest.mark.django_db
def test_future_days_are_missing_and_malformed_days_are_refused(daily_clock: Clock, client: Client) -> None:
    response = client.get(f"/api/v1/daily/{TODAY + timedelta(days=1)}")
    assert (response.status_code, response.json()["code"]) == (404, "no_daily_deal")
    assert response["Content-Type"] == "application/problem+json"
    assert not DailyDeal.objects.filter(date=TODAY + timedelta(days=1)).exists()
    for malformed in ("2026-02-29", "05-03-2026", "2026-03-05T00:00", "x"):
        response = client.get(f"/api/v1/daily/{malformed}")
        assert (response.status_code, response.json()["code"]) == (400, "invalid_date")


@pytest.mark.django_db
def test_an_authenticated_caller_sees_their_attempts_and_result(
    daily_clock: Clock, make_player: MakePlayer
) -> None:
    player, client = make_player()
    assert client.get("/api/v1/daily").json()["attempts"] == []
    ranked = services.attempt_start(player=player, day=TODAY)
    assert client.get("/api/v1/daily").json()["result"] is None
    play_to_the_end(ranked.game)
    practice = services.attempt_start(player=player, day=TODAY)
    body = client.get("/api/v1/daily").json()
    assert [(a["id"], a["game_id"], a["ranked"]) for a in body["attempts"]] == [
        (str(ranked.public_id), str(ranked.game_id), True),
        (str(practice.public_id), str(practice.game_id), False),
    ]
    submission = ranked.submission
    assert body["result"]["result"] == submission.result
    assert (body["result"]["rank"], body["result"]["count"], body["result"]["percentile"]) == (1, 1, 100.0)


@pytest.mark.django_db
def _every_response(client: Client, attempts: Iterable[Attempt]) -> list[str]:
    return [
        client.get(path).content.decode()
        for path in (
            "/api/v1/daily",
            f"/api/v1/daily/{TODAY}",
            f"/api/v1/daily/{TODAY}/leaderboard",
            f"/api/v1/daily/{TODAY}/leaderboard/me",
            "/api/v1/players/me/daily",
            *(f"/api/v1/games/{attempt.game_id}" for attempt in attempts),
            *(f"/api/v1/games/{attempt.game_id}/events" for attempt in attempts),
            "/api/v1/games",
            "/api/v1/players/me",
        )
    ]


@pytest.mark.django_db
def test_todays_seed_never_appears_in_any_response(daily_clock: Clock, make_player: MakePlayer) -> None:
    player, client = make_player()
    seen: list[object] = [client.get("/api/v1/daily").json()]
    seen.append(client.post(f"/api/v1/daily/{TODAY}/attempts").json())
    ranked = player.daily_attempts.get()
    hint = client.get(f"/api/v1/games/{ranked.game_id}/hint")
    assert hint.status_code == 403
    seen.append(hint.content.decode())
    play_to_the_end(ranked.game, client, seen)
    seen.append(client.post(f"/api/v1/daily/{TODAY}/attempts").json())
    attempts = player.daily_attempts.order_by("id")
    play_to_the_end(attempts[1].game, client, seen)
    for attempt in attempts:
        seen.append(game_view(game=attempt.game, seat=0))
    seen.append(client.get(f"/api/v1/games/{attempts[1].game_id}/hint").content.decode())
    seen += _every_response(client, attempts)
    # After midnight, inside the finishing grace period, the day is not over yet for the leaderboard.
    daily_clock.set(datetime(2026, 3, 6, 0, 59, 59, tzinfo=UTC))
    seen += _every_response(client, attempts)
    seen += [game_view(game=attempt.game, seat=0) for attempt in attempts]
    seed = DailyDeal.objects.get(date=TODAY).seed
    assert all(attempt.game.status != "playing" for attempt in attempts)
    text = json.dumps(seen).lower()
    leaked = seed in text
    assert not leaked, "today's seed appears in a response"

    daily_clock.set(datetime(2026, 3, 6, 1, 0, tzinfo=UTC))
    assert game_view(game=attempts[0].game, seat=0)["seed"] == seed
    assert client.get(f"/api/v1/games/{attempts[1].game_id}").json()["seed"] == seed
