"""The leaderboard of a day: order, shared ranks, keyset pages that stay stable while results arrive, and
a player's rank and percentile."""

import base64
import json
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from daily import services
from daily.models import DailyDeal, ResultCount, Submission
from games.models import Player
from tests.support.daily import NOON, TODAY, Clock, MakePlayer, bare_player, ranked_submission


@pytest.fixture
def deal(db: None, daily_clock: Clock) -> DailyDeal:
    return services.daily_deal_get_or_create(day=TODAY)


def _at(minutes: int) -> datetime:
    return datetime(2026, 3, 5, 8, 0, tzinfo=UTC) + timedelta(minutes=minutes)


def _pages(client: Client, url: str) -> list[dict[str, Any]]:
    pages = []
    while url:
        body = client.get(url).json()
        pages.append(body)
        url = body["next"]
    return pages


def test_higher_results_first_ties_share_a_rank_then_fewer_turns_then_earlier_finish(
    deal: DailyDeal, client: Client
) -> None:
    for name, result, turns, minute in [
        ("late", 14, 9, 30),
        ("low", -3, 5, 1),
        ("slow", 14, 12, 0),
        ("early", 14, 9, 10),
        ("top", 20, 15, 50),
        ("lower", -7, 4, 0),
    ]:
        ranked_submission(deal, name=name, result=result, turns=turns, finished_at=_at(minute))
    body = client.get(f"/api/v1/daily/{TODAY}/leaderboard").json()
    assert body["date"] == TODAY.isoformat()
    assert body["count"] == 6
    assert body["next"] is None
    assert [(e["rank"], e["player"]["name"], e["result"], e["turns"]) for e in body["items"]] == [
        (1, "top", 20, 15),
        (2, "early", 14, 9),
        (2, "late", 14, 9),
        (2, "slow", 14, 12),
        (5, "low", -3, 5),
        (6, "lower", -7, 4),
    ]
    assert body["items"][1]["finished_at"] == "2026-03-05T08:10:00Z"
    assert set(body["items"][0]["player"]) == {"id", "name", "discriminator", "display_name"}


def test_an_attempt_closed_at_the_deadline_never_outranks_a_finished_one_with_the_same_result(
    deal: DailyDeal, client: Client
) -> None:
    """Stopping early must not pay: a closed attempt with fewer turns and an earlier finish still comes
    after every finished attempt with its result, and shows as closed."""
    ranked_submission(deal, name="walked-away", result=-5, turns=1, finished_at=_at(0), closed=True)
    ranked_submission(deal, name="played-on", result=-5, turns=30, finished_at=_at(90))
    ranked_submission(deal, name="worse", result=-6, turns=2, finished_at=_at(1))
    body = client.get(f"/api/v1/daily/{TODAY}/leaderboard").json()
    assert [(e["rank"], e["player"]["name"], e["closed"]) for e in body["items"]] == [
        (1, "played-on", False),
        (1, "walked-away", True),
        (3, "worse", False),
    ]
    assert body["status"] == "open"


def test_cursor_pages_cover_the_board_once_in_order(deal: DailyDeal, client: Client) -> None:
    for index in range(23):
        ranked_submission(
            deal,
            name=f"p{index}",
            result=index % 5 - 2,
            turns=index % 3 + 4,
            finished_at=_at(index % 4),
            closed=index % 7 == 0,
        )
    pages = _pages(client, f"/api/v1/daily/{TODAY}/leaderboard?limit=5")
    assert [len(page["items"]) for page in pages] == [5, 5, 5, 5, 3]
    assert "limit=5" in pages[0]["next"] and pages[0]["next"].startswith("http://testserver/")
    entries = [entry for page in pages for entry in page["items"]]
    expected = Submission.objects.order_by("-result", "closed", "turns", "finished_at", "public_id")
    assert [entry["player"]["id"] for entry in entries] == [str(s.player_id) for s in expected]
    assert [entry["rank"] for entry in entries] == [
        1 + sum(1 for other in expected if other.result > s.result) for s in expected
    ]


def test_a_cursor_is_stable_while_results_arrive(deal: DailyDeal, client: Client) -> None:
    for index in range(6):
        ranked_submission(deal, name=f"p{index}", result=10 - index, turns=5, finished_at=_at(index))
    first = client.get(f"/api/v1/daily/{TODAY}/leaderboard?limit=3").json()
    # Results that arrive now, above, inside and below the first page's last entry.
    ranked_submission(deal, name="above", result=30, turns=1, finished_at=_at(100))
    ranked_submission(deal, name="same-after", result=8, turns=5, finished_at=_at(101))
    ranked_submission(deal, name="below", result=-5, turns=5, finished_at=_at(102))
    rest = [entry for page in _pages(client, first["next"]) for entry in page["items"]]
    names = [entry["player"]["name"] for entry in first["items"] + rest]
    assert names == ["p0", "p1", "p2", "same-after", "p3", "p4", "p5", "below"]
    # Ranks are those of now: "above" moved everyone down one.
    assert [entry["rank"] for entry in rest] == [4, 6, 7, 8, 9]


def test_a_cursor_nested_past_the_recursion_limit_is_a_400_not_a_500(deal: DailyDeal, client: Client) -> None:
    deep = base64.urlsafe_b64encode(b"[" * 1_000 + b"]" * 1_000).decode()
    response = client.get(f"/api/v1/daily/{TODAY}/leaderboard?cursor={deep}")
    assert (response.status_code, response.json()["code"]) == (400, "invalid_cursor")


@pytest.mark.parametrize(
    "finished_at",
    [
        "2026-03-05T12:00:00+16:00",
        "2026-03-05T12:00:00-23:59",
        "2026-03-05T12:00:00+01:00",
        "2026-03-05T12:00:00",
    ],
)
def test_a_cursor_whose_time_is_not_in_utc_is_a_400_not_a_500(
    deal: DailyDeal, client: Client, finished_at: str
) -> None:
    """The cursors given out name their time in UTC; PostgreSQL refuses an offset of ±16:00 or more."""
    ranked_submission(deal, name="p0", result=1, turns=5, finished_at=NOON)

    def cursor(at: str) -> str:
        text = json.dumps([0, False, 1, at, "00000000-0000-0000-0000-000000000000"])
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    response = client.get(f"/api/v1/daily/{TODAY}/leaderboard?cursor={cursor(finished_at)}")
    assert (response.status_code, response.json()["code"]) == (400, "invalid_cursor")
    assert (
        client.get(
            f"/api/v1/daily/{TODAY}/leaderboard?cursor={cursor('2026-03-05T12:00:00+00:00')}"
        ).status_code
        == 200
    )


def test_the_cursor_names_no_sequential_id(deal: DailyDeal, client: Client) -> None:
    for index in range(3):
        ranked_submission(deal, name=f"p{index}", result=index, turns=5, finished_at=NOON)
    following = client.get(f"/api/v1/daily/{TODAY}/leaderboard?limit=1").json()["next"]
    cursor = parse_qs(urlsplit(following).query)["cursor"][0]
    decoded = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    top = Submission.objects.get(result=2)
    assert decoded[-1] == str(top.public_id) and top.id not in decoded


def test_limit_and_cursor_are_checked(deal: DailyDeal, client: Client) -> None:
    for query in ("limit=0", "limit=101", "limit=ten", "limit=-1"):
        response = client.get(f"/api/v1/daily/{TODAY}/leaderboard?{query}")
        assert (response.status_code, response.json()["code"]) == (400, "invalid_limit")
    bad_cursors = ["nonsense!", base64.urlsafe_b64encode(b'[1, 2, "x", 3]').decode(), "W10", "eyJhIjogMX0"]
    for cursor in bad_cursors:
        response = client.get(f"/api/v1/daily/{TODAY}/leaderboard?cursor={cursor}")
        assert (response.status_code, response.json()["code"]) == (400, "invalid_cursor")
    assert client.get(f"/api/v1/daily/{TODAY}/leaderboard?limit=100").status_code == 200


def test_leaderboard_of_a_future_day_is_missing_and_a_malformed_day_is_refused(
    deal: DailyDeal, client: Client
) -> None:
    assert client.get(f"/api/v1/daily/{TODAY + timedelta(days=1)}/leaderboard").status_code == 404
    assert client.get("/api/v1/daily/2026-13-01/leaderboard").status_code == 400


def test_an_empty_board(deal: DailyDeal, client: Client) -> None:
    body = client.get(f"/api/v1/daily/{TODAY}/leaderboard").json()
    assert (body["count"], body["items"], body["next"]) == (0, [], None)


def test_me_gives_rank_result_percentile_and_count(deal: DailyDeal, make_player: MakePlayer) -> None:
    player, client = make_player("Me")
    for index, result in enumerate([20, 14, 14, 3, -2, -2, -9, -9, -9]):
        ranked_submission(deal, name=f"p{index}", result=result, turns=5, finished_at=_at(index))
    ranked_submission(deal, name="Me", result=14, turns=9, finished_at=_at(50), player=player)
    body = client.get(f"/api/v1/daily/{TODAY}/leaderboard/me").json()
    # 10 results; one is better; 9 of 10 (the player's own included) are at or below 14.
    assert body == {
        "rank": 2,
        "result": 14,
        "closed": False,
        "percentile": 90.0,
        "count": 10,
        "par": None,
        "vs_par": None,
        "par_reached": None,
    }


def test_percentile_is_100_for_the_top_and_its_share_for_the_last(
    deal: DailyDeal, make_player: MakePlayer
) -> None:
    top, top_client = make_player("Top")
    last, last_client = make_player("Last")
    ranked_submission(deal, name="Top", result=9, turns=5, finished_at=NOON, player=top)
    ranked_submission(deal, name="mid", result=1, turns=5, finished_at=NOON)
    ranked_submission(deal, name="Last", result=-4, turns=5, finished_at=NOON, player=last)
    assert top_client.get(f"/api/v1/daily/{TODAY}/leaderboard/me").json()["percentile"] == 100.0
    assert last_client.get(f"/api/v1/daily/{TODAY}/leaderboard/me").json()["percentile"] == 33.3


def test_me_without_a_ranked_result_is_missing_and_needs_a_token(
    deal: DailyDeal, make_player: MakePlayer, client: Client
) -> None:
    _, player_client = make_player()
    response = player_client.get(f"/api/v1/daily/{TODAY}/leaderboard/me")
    assert (response.status_code, response.json()["code"]) == (404, "no_ranked_result")
    assert client.get(f"/api/v1/daily/{TODAY}/leaderboard/me").status_code == 401


def test_result_counts_agree_with_the_submissions(deal: DailyDeal) -> None:
    results = [3, 3, -1, 7, 3, -1]
    for index, result in enumerate(results):
        ranked_submission(deal, name=f"p{index}", result=result, turns=5, finished_at=_at(index))
    assert dict(ResultCount.objects.filter(deal=deal).values_list("result", "count")) == {3: 3, -1: 2, 7: 1}


def test_boards_of_different_days_are_separate(deal: DailyDeal, client: Client) -> None:
    other = services.daily_deal_get_or_create(day=date(2026, 3, 4))
    player = bare_player("both")
    ranked_submission(deal, name="both", result=5, turns=5, finished_at=NOON, player=player)
    ranked_submission(other, name="both", result=-5, turns=5, finished_at=NOON, player=player)
    assert [e["result"] for e in client.get("/api/v1/daily/2026-03-04/leaderboard").json()["items"]] == [-5]
    assert client.get(f"/api/v1/daily/{TODAY}/leaderboard").json()["count"] == 1


def test_pages_through_a_tie_in_result_turns_and_finish_skip_no_one(deal: DailyDeal, client: Client) -> None:
    # Attempts closed at the finishing deadline all finish at the same instant, often with the same result
    # and turns: only the public id orders them, so the cursor must compare finish times as the database
    # stores them.
    for index in range(7):
        ranked_submission(deal, name=f"tied{index}", result=-8, turns=0, finished_at=NOON)
    pages = _pages(client, f"/api/v1/daily/{TODAY}/leaderboard?limit=2")
    names = [entry["player"]["name"] for page in pages for entry in page["items"]]
    by_public_id = Submission.objects.order_by("public_id").values_list("player__name", flat=True)
    assert names == list(by_public_id) and len(set(names)) == 7
    assert {entry["rank"] for page in pages for entry in page["items"]} == {1}


_MORNING = '"2026-03-05T08:00:00+00:00"'
_ID = '"0e9a4bd2-86b4-4ad7-9b0e-3f6c7a52d1c0"'


@pytest.mark.parametrize(
    ("limit", "cursor"),
    [
        ("\u00b2", None),
        ("\u0663", None),
        (None, f"[Infinity, false, 2, {_MORNING}, {_ID}]"),
        (None, f"[1e400, false, 2, {_MORNING}, {_ID}]"),
        (None, f"[1, false, 2, {_MORNING}, {10**26}]"),
        (None, f"[1, false, 2, {_MORNING}, 1]"),
        (None, f'[1, false, 2, {_MORNING}, "not-a-uuid"]'),
        (None, f"[{10**23}, false, 2, {_MORNING}, {_ID}]"),
        (None, f"[1, false, {10**23}, {_MORNING}, {_ID}]"),
        (None, f"[1, false, -1, {_MORNING}, {_ID}]"),
        (None, f'[1, false, 2, "0001-01-01T00:00:00+14:00", {_ID}]'),
        (None, f"[1, 0, 2, {_MORNING}, {_ID}]"),
        (None, f"[1, 2, {_MORNING}, {_ID}]"),
    ],
)
def test_a_limit_or_cursor_out_of_range_is_a_400_problem_not_a_server_error(
    deal: DailyDeal, client: Client, limit: str | None, cursor: str | None
) -> None:
    ranked_submission(deal, name="one", result=1, turns=2, finished_at=NOON)
    query = {}
    if limit is not None:
        query["limit"] = limit
    if cursor is not None:
        query["cursor"] = base64.urlsafe_b64encode(cursor.encode()).decode().rstrip("=")
    response = client.get(f"/api/v1/daily/{TODAY}/leaderboard", query)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == ("invalid_limit" if limit is not None else "invalid_cursor")


def test_the_board_tells_two_players_whose_names_look_alike_apart(deal: DailyDeal, client: Client) -> None:
    ranked_submission(deal, name="Ada", result=10, turns=5, finished_at=_at(0))
    ranked_submission(deal, name="ɑdɑ", result=5, turns=5, finished_at=_at(1))
    entries = client.get(f"/api/v1/daily/{TODAY}/leaderboard").json()["items"]
    players = [entry["player"] for entry in entries]
    assert [player["name"] for player in players] == ["Ada", "ɑdɑ"]
    assert players[0]["discriminator"] != players[1]["discriminator"]
    for player in players:
        stored = Player.objects.get(id=player["id"])
        assert player["display_name"] == f"{player['name']}#{stored.discriminator}" == stored.display_name
