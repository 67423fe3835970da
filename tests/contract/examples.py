"""The schema's examples, captured from real requests to the API: a game from a fixed seed, its errors, and
a daily deal on a fixed day. `capture()` makes them again; the test compares them with
kingscorner/api/openapi_examples.json, and `pytest tests/contract/test_examples.py --write-examples` rewrites
it."""

import json
import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any
from unittest import mock

from django.http import StreamingHttpResponse
from rest_framework.test import APIClient

from daily import services
from games.engine import PILES, MoveJson, Rules, play_refusal
from games.engine.players import best_turn
from kingscorner.api.examples import EXAMPLES_FILE
from tests.support.games import seed_while_waiting
from tests.support.tables import turn_aged

# Noon on a fixed day, so that the daily deal, its countdown and its dates are the same at every capture.
NOON = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)
DAY = "2026-03-05"
YESTERDAY = "2026-03-04"
TOMORROW = "2026-03-06"
PAR_NODE_BUDGET = 300
PAR_STEPS_SHOWN = 3
# Fixed invitation codes, so that the invitations are the same at every capture: a table's first, and one
# issued again after a revoke.
INVITATION_CODE = "Qk1sY0dViWq3Xr8nT2bLz5HfJm9uEo4A"
REISSUED_CODE = "p4Xn0Qe7TqLzV2wB9sY1uJ6mR3cK8dHf"


def _whole_turn(view: dict[str, Any]) -> list[MoveJson]:
    rules = Rules.from_json(view["rules"])
    return [move.to_json() for move in best_turn(rules, view["hand"], view["table"]["piles"])]


def _seed_with_a_long_turn(client: APIClient) -> str:
    """The first seed whose first turn, as sharp plays it, has at least three moves."""
    for index in range(100):
        seed = f"{index:064x}"
        view = client.post("/api/v1/games", {"seed": seed, "opponents": 3}, format="json").json()
        if len(_whole_turn(view)) >= 3:
            return seed
    raise AssertionError("no seed with a long first turn")


def _illegal_after(view: dict[str, Any], first: dict[str, Any]) -> dict[str, Any]:
    """A play that does not fit, once `first` is made."""
    rules = Rules.from_json(view["rules"])
    piles = {name: list(pile) for name, pile in view["table"]["piles"].items()}
    piles[first["to"]].append(first["card"])
    for card in view["hand"]:
        if card == first["card"]:
            continue
        for to in PILES:
            refusal = play_refusal(rules, piles, card, to)
            if refusal is not None and refusal[0] == "does_not_fit":
                return {"type": "play", "card": card, "to": to}
    raise AssertionError("every card fits everywhere")


def _play_to_the_hand_end(client: APIClient, view: dict[str, Any]) -> dict[str, Any]:
    while view["status"] == "playing":
        response = client.post(
            f"/api/v1/games/{view['id']}/moves",
            {"moves": _whole_turn(view), "expected_version": view["version"]},
            format="json",
        )
        assert response.status_code == 200, response.content
        view = response.json()
    return view


def capture(set_now: Callable[[datetime], None]) -> dict[str, Any]:
    """Every example, from real responses; `set_now` pins the daily deal's clock."""
    set_now(NOON)
    examples: dict[str, Any] = {}
    anonymous = APIClient()
    examples["api_index_response"] = anonymous.get("/api/v1/").json()
    health = anonymous.get("/api/v1/health").json()
    # As deployed, with Redis as the cache; a run without REDIS_URL has an in-process one.
    assert health["cache"] in ("ok", "not_configured"), health
    examples["health_response"] = {**health, "cache": "ok"}
    examples["rules_response"] = anonymous.get("/api/v1/rules").json()

    examples["players_create_request"] = {"name": "Ada"}
    created = anonymous.post("/api/v1/players", examples["players_create_request"], format="json")
    examples["players_create_response"] = created.json()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.json()['token']}")
    examples["players_me_response"] = client.get("/api/v1/players/me").json()

    seed = _seed_with_a_long_turn(client)
    examples["games_create_request"] = {"opponents": 3, "level": "normal", "rules": "classic", "seed": seed}
    game = client.post("/api/v1/games", examples["games_create_request"], format="json").json()
    examples["games_create_response"] = game
    path = f"/api/v1/games/{game['id']}"
    examples["games_get_response"] = client.get(path).json()
    examples["games_hint_response"] = client.get(f"{path}/hint").json()
    examples["games_moves_request"] = {"moves": _whole_turn(game), "expected_version": game["version"]}
    after = client.post(f"{path}/moves", examples["games_moves_request"], format="json").json()
    examples["games_moves_response"] = after
    stale = client.post(f"{path}/moves", examples["games_moves_request"], format="json")
    assert stale.status_code == 409
    examples["games_moves_version_conflict"] = stale.json()
    again = client.post("/api/v1/games", {"seed": seed}, format="json").json()
    first = next(move for move in again["legal_moves"] if move["type"] == "play")
    illegal = {"moves": [first, _illegal_after(again, first)], "expected_version": again["version"]}
    refused = client.post(f"/api/v1/games/{again['id']}/moves", illegal, format="json")
    assert refused.status_code == 422 and refused.json()["move_index"] == 1, refused.content
    examples["games_moves_does_not_fit"] = refused.json()
    examples["games_events_response"] = client.get(f"{path}/events?limit=4").json()
    examples["games_stream_ticket_response"] = client.post(f"{path}/stream-tickets").json()
    stream = client.get(
        f"{path}/stream?last_event_id=0&ticket={examples['games_stream_ticket_response']['ticket']}"
    )
    assert isinstance(stream, StreamingHttpResponse)
    first_events = b"".join(stream).decode().split("\n\n")[:4]
    examples["games_stream_response"] = "\n\n".join(first_events) + "\n\n"

    two_hands = client.post(
        "/api/v1/games", {"seed": seed, "opponents": 1, "level": "easy", "target_score": 200}, format="json"
    ).json()
    over = _play_to_the_hand_end(client, two_hands)
    dealt = client.post(
        f"/api/v1/games/{over['id']}/hands", {"expected_version": over["version"]}, format="json"
    )
    examples["games_hands_deal_response"] = dealt.json()
    examples["games_list_response"] = client.get("/api/v1/games?limit=1").json()
    _capture_tables(examples, client, seed)

    examples["analysis_request"] = {
        "rules": "classic",
        "hand": ["KS", "QD", "5C", "TH"],
        "piles": {"N": ["6H"], "E": ["JC"], "S": ["9S"], "W": ["2D"]},
        "stock": 30,
    }
    examples["analysis_response"] = anonymous.post(
        "/api/v1/analysis", examples["analysis_request"], format="json"
    ).json()

    attempt = client.post(f"/api/v1/daily/{DAY}/attempts").json()
    examples["daily_attempt_create_response"] = attempt
    _play_to_the_hand_end(client, attempt["game"])
    examples["daily_today_response"] = client.get("/api/v1/daily").json()
    # Yesterday's seed is revealed at noon today: its par, as the job computes it (with a small budget, so
    # that the capture is quick).
    yesterday = services.daily_deal_get_or_create(day=date.fromisoformat(YESTERDAY))
    services.daily_par_compute(deal=yesterday, node_budget=PAR_NODE_BUDGET)
    examples["daily_day_response"] = anonymous.get(f"/api/v1/daily/{YESTERDAY}").json()
    par = anonymous.get(f"/api/v1/daily/{YESTERDAY}/par").json()
    # A whole hand's replay is tens of kilobytes; the example shows its first steps (PAR_STEPS_SHOWN).
    examples["daily_par_response"] = {**par, "steps": par["steps"][:PAR_STEPS_SHOWN]}
    examples["daily_leaderboard_response"] = anonymous.get(f"/api/v1/daily/{DAY}/leaderboard").json()
    examples["daily_leaderboard_me_response"] = client.get(f"/api/v1/daily/{DAY}/leaderboard/me").json()
    examples["player_daily_history_response"] = client.get("/api/v1/players/me/daily").json()
    examples["players_token_rotate_response"] = client.post("/api/v1/players/me/token").json()
    examples["daily_anchor_response"] = anonymous.get("/api/v1/daily/anchor").json()
    examples["daily_commitments_response"] = anonymous.get(
        f"/api/v1/daily/commitments?from={YESTERDAY}&to={TOMORROW}"
    ).json()
    return examples


def _capture_tables(examples: dict[str, Any], client: APIClient, seed: str) -> None:
    """A table for two people and a sharp computer, the friend's join that starts it, a table its creator
    starts, a rematch (dealt from a fixed seed here, so that it is the same at every capture), and the
    abandonment rule's operations."""
    examples["games_create_table_request"] = {
        "seats": [{"kind": "person"}, {"kind": "person"}, {"kind": "computer", "level": "sharp"}],
        "turn_seconds": 120,
    }
    # A fixed invitation code, so that the invitation as a friend sees it is the same at every capture.
    with mock.patch("games.services.tables.secrets.token_urlsafe", return_value=INVITATION_CODE):
        table = _people_table(client, examples["games_create_table_request"], seed)
    examples["games_create_table_response"] = table
    # What the friend sees before joining, without a token: the invitation's page reads it so.
    examples["invitations_get_response"] = APIClient().get(table["invitation"]["join"]).json()
    friend = APIClient()
    token = friend.post("/api/v1/players", {"name": "Grace"}, format="json").json()["token"]
    friend.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    examples["invitations_join_response"] = friend.post(table["invitation"]["join"]).json()
    # The friend's person stream: the table they joined started.
    examples["players_stream_ticket_response"] = friend.post("/api/v1/players/me/stream-tickets").json()
    person_stream = friend.get("/api/v1/players/me/stream")
    assert isinstance(person_stream, StreamingHttpResponse)
    examples["players_stream_response"] = b"".join(person_stream).decode()

    waiting = _people_table(
        client, {"seats": [{"kind": "person"}, {"kind": "person"}], "fill_level": "easy"}, seed
    )
    examples["games_start_response"] = client.post(f"/api/v1/games/{waiting['id']}/start").json()

    one_hand = client.post(
        "/api/v1/games", {"seed": seed, "opponents": 1, "level": "easy", "target_score": None}, format="json"
    ).json()
    over = _play_to_the_hand_end(client, one_hand)
    with mock.patch("games.services.tables.secrets.token_bytes", return_value=bytes.fromhex(seed)):
        rematch = client.post(f"/api/v1/games/{over['id']}/rematch")
    assert rematch.status_code == 201, rematch.content
    examples["games_rematch_response"] = rematch.json()
    examples["games_rematch_again_response"] = client.post(f"/api/v1/games/{over['id']}/rematch").json()
    _capture_abandonment(examples, client, friend, seed)


def _people_table(client: APIClient, body: dict[str, Any], seed: str) -> dict[str, Any]:
    """A table with other people, which the API deals from a seed nobody chose: fixed in the database while
    it waits, so that its deal is the same at every capture."""
    table: dict[str, Any] = client.post("/api/v1/games", body, format="json").json()
    seed_while_waiting(table, seed)
    return table


def _capture_abandonment(examples: dict[str, Any], client: APIClient, friend: APIClient, seed: str) -> None:
    """A waiting table's invitation issued again after a revoke, and a table of two people at which the one
    not to move hands the other's seat to a computer: too early, then once the turn began abandon_seconds
    ago (its start moved back in the database, as a day passing would)."""
    waiting = _people_table(client, {"seats": [{"kind": "person"}] * 3}, seed)
    path = f"/api/v1/games/{waiting['id']}/invitation"
    assert client.delete(path).status_code == 204
    # The new code is random; the example's is fixed, so that it is the same at every capture.
    with mock.patch("games.services.tables.secrets.token_urlsafe", return_value=REISSUED_CODE):
        issued = client.post(path)
    assert issued.status_code == 201, issued.content
    examples["games_invitation_issue_response"] = issued.json()

    table = _people_table(client, {"seats": [{"kind": "person"}] * 2, "abandon_seconds": 3600}, seed)
    started = friend.post(table["invitation"]["join"]).json()
    absent = started["current_seat"]
    present = friend if absent == 0 else client
    replace = f"/api/v1/games/{table['id']}/seats/{absent}/replace"
    early = present.post(replace)
    assert early.status_code == 409, early.content
    examples["games_seat_replace_not_abandoned"] = early.json()
    turn_aged(table["id"], 3600)
    replaced = present.post(replace)
    assert replaced.status_code == 200, replaced.content
    examples["games_seat_replace_response"] = replaced.json()


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TOKEN = re.compile(r"kc_[A-Za-z0-9_-]+")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
_CURSOR = re.compile(r"cursor=[^&]+")
_TICKET = re.compile(r"ticket=[^&\s]+")
# Members that differ from one capture to the next: database ids and the times rows were written.
_VOLATILE_KEYS = {"id", "game_id", "created_at", "updated_at", "started_at", "invitation", "ticket"}


def normalized(value: Any) -> Any:
    """`value` with what differs between two captures (ids, tokens, times of writes) masked."""
    if isinstance(value, dict):
        return {
            key: "<volatile>" if key in _VOLATILE_KEYS else normalized(item) for key, item in value.items()
        }
    if isinstance(value, list):
        return [normalized(item) for item in value]
    if isinstance(value, str):
        for pattern, mask in (
            (_UUID, "<uuid>"),
            (_TOKEN, "<token>"),
            (_TIME, "<time>"),
            (_CURSOR, "cursor="),
            (_TICKET, "ticket="),
        ):
            value = pattern.sub(mask, value)
    return value


def write(examples: dict[str, Any]) -> None:
    EXAMPLES_FILE.write_text(json.dumps(examples, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
