"""Every code has one status everywhere, and every operation documents exactly the codes it can send: each
(operation, code) pair the served OpenAPI document lists is driven through the real endpoint here, and the
response (checked against the document by the autouse fixture) carries that code with the registry's
status."""

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import pytest
from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.test import override_settings
from rest_framework.response import Response
from rest_framework.test import APIClient

from daily import clock
from games import persistence
from games.engine import State
from games.models import DISCRIMINATOR_MAX, DISCRIMINATOR_MIN, Game, Player
from games.names import name_skeleton
from kingscorner.api import health
from kingscorner.api.problems import problem
from tests.support.games import with_another_person
from tests.support.openapi import responses_of, served_document
from tests.support.problems import PROBLEM

NOON = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)
AFTER_THE_DEADLINE = datetime(2026, 3, 6, 2, 0, tzinfo=UTC)
TODAY = "2026-03-05"
TOMORROW = "2026-03-06"


def documented_codes() -> dict[tuple[str, str], tuple[str, str]]:
    """(operationId, code) -> (method, path) for every code each operation's problem responses list."""
    document = served_document()
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for response in responses_of(operation).values():
                content = response.get("content", {}).get(PROBLEM)
                if content is None:
                    continue
                assert content["schema"]["$ref"].startswith("#/components/schemas/Problem")
                for code in response["x-codes"]:
                    found[(operation["operationId"], code)] = (method, path)
    return found


@dataclass
class World:
    """A player with a token and what the scenarios act on, made when first asked for."""

    monkeypatch: pytest.MonkeyPatch
    now: list[datetime] = field(default_factory=lambda: [NOON])
    client: APIClient = field(default_factory=APIClient)

    def __post_init__(self) -> None:
        self.monkeypatch.setattr(clock, "now", lambda: self.now[-1])
        body = self.client.post("/api/v1/players", {"name": "Ada"}, format="json").json()
        self.token = body["token"]
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.token}")

    def game(self, **body: Any) -> dict[str, Any]:
        # A fixed seed, except at a table with another person, which takes none.
        fixed = {} if with_another_person(body) else {"seed": "ab" * 32}
        response = self.client.post("/api/v1/games", fixed | body, format="json")
        assert response.status_code == 201, response.content
        return dict(response.json())

    def game_where(
        self, *, status: str = "playing", hand: list[str] | None = None, **piles: list[str]
    ) -> str:
        """A new game's id, its state rewritten: the player's hand, the named piles (others empty), the
        status."""
        game = Game.objects.get(id=self.game()["id"])
        state = game.state
        if hand is not None:
            state["hands"][0] = hand
        if piles:
            state["piles"] = {name: piles.get(name, []) for name in state["piles"]}
        state["status"] = status
        game.status = status
        game.state = State.from_json(state).to_json()
        game.save()
        return str(game.id)

    def ranked_attempt(self) -> str:
        response = self.client.post(f"/api/v1/daily/{TODAY}/attempts")
        assert response.status_code == 201 and response.json()["ranked"], response.content
        return str(response.json()["game"]["id"])


Call = Callable[[World, str, str], Response]


def send(
    world: World,
    method: str,
    path: str,
    *,
    body: Any = None,
    raw: str | None = None,
    content_type: str = "application/json",
    client: APIClient | None = None,
    **headers: Any,
) -> Response:
    client = client or world.client
    if method in ("get", "delete"):
        response: Response = getattr(client, method)(path, **headers)
        return response
    data = raw if raw is not None else ("" if body is None else json.dumps(body))
    response = client.post(path, data, content_type=content_type, **headers)
    return response


def _path(path: str, **values: str) -> str:
    """The path with its parameters filled in; a seat the scenario does not name is seat 1."""
    for name, value in {"seat": "1", **values}.items():
        path = path.replace("{" + name + "}", value)
    return path


def on_game(make: Callable[[World], str], *, body: Any = None, query: str = "", **headers: Any) -> Call:
    """A request to the operation, on the game `make` gives."""

    def call(world: World, method: str, path: str) -> Response:
        target = _path(path, game_id=make(world), day=TODAY) + query
        return send(world, method, target, body=body, **headers)

    return call


def on_day(day: str, *, query: str = "") -> Call:
    def call(world: World, method: str, path: str) -> Response:
        return send(world, method, _path(path, day=day, game_id=world.game()["id"]) + query)

    return call


def with_body(body: Any) -> Call:
    def call(world: World, method: str, path: str) -> Response:
        return send(world, method, _path(path, game_id=world.game()["id"], day=TODAY), body=body)

    return call


def moves(*moves: dict[str, Any], make: Callable[[World], str] | None = None) -> Call:
    return on_game(make or (lambda world: world.game()["id"]), body={"moves": list(moves)})


def _fresh(world: World) -> str:
    return str(world.game()["id"])


def _missing(world: World) -> str:
    return str(uuid.uuid4())


def _not_a_uuid(world: World) -> str:
    return "not-a-uuid"


def _finished(world: World) -> str:
    return world.game_where(status="finished")


def _between_hands(world: World) -> str:
    return world.game_where(status="hand_over")


def _expired_attempt(world: World) -> str:
    game_id = world.ranked_attempt()
    world.now.append(AFTER_THE_DEADLINE)
    return game_id


def _key_reused(world: World, method: str, path: str) -> Response:
    dealing = path.endswith("hands")
    target = _path(path, game_id=_between_hands(world) if dealing else _fresh(world))
    first = {} if dealing else {"moves": [{"type": "end_turn"}]}
    assert send(world, method, target, body=first, HTTP_IDEMPOTENCY_KEY="k").status_code == 200
    return send(world, method, target, body={**first, "expected_version": 2}, HTTP_IDEMPOTENCY_KEY="k")


def _rate_limited(world: World, method: str, path: str) -> Response:
    rates = {"anon": "0/min", "user": "0/min"}
    target = _path(path, game_id=world.game()["id"], day=TODAY)
    with override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}):
        return send(world, method, target, body=body)


def _unauthenticated(world: World, method: str, path: str) -> Response:
    return send(world, method, _path(path, game_id=world.game()["id"], day=TODAY), client=APIClient())


def _stale_token(world: World, method: str, path: str) -> Response:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer kc_a-token-that-was-replaced")
    return send(world, method, _path(path, game_id=world.game()["id"], day=TODAY), client=client)


def _raw(raw: str, content_type: str = "application/json") -> Call:
    def call(world: World, method: str, path: str) -> Response:
        target = _path(path, game_id=world.game()["id"], day=TODAY)
        return send(world, method, target, raw=raw, content_type=content_type)

    return call


def _too_large(world: World, method: str, path: str) -> Response:
    target = _path(path, game_id=world.game()["id"], day=TODAY)
    return send(world, method, target, raw=json.dumps({"padding": "x" * settings.MAX_BODY_BYTES}))


def _chunked(world: World, method: str, path: str) -> Response:
    """A body in chunks, as gunicorn passes it on: Transfer-Encoding, and no Content-Length."""
    target = _path(path, game_id=world.game()["id"], day=TODAY)
    response: Response = world.client.generic(
        method.upper(), target, "", content_type="application/json", HTTP_TRANSFER_ENCODING="chunked"
    )
    return response


def _before_the_first_deal(world: World, method: str, path: str) -> Response:
    with override_settings(DAILY_EPOCH=date(2027, 1, 1)):
        return send(world, method, path)


def _database_down(world: World, method: str, path: str) -> Response:
    """The request is made while every new cursor fails as one does when the server refuses connections
    (tests/test_database_outage.py takes a real database away)."""
    target = _path(path, game_id=world.game()["id"], day=TODAY)
    # A body the operation takes, so that only the database stands in its way.
    bodies = {
        "players": {"name": "Ada"},
        "moves": {"moves": [{"type": "end_turn"}]},
        "analysis": {"hand": []},
    }
    body = bodies.get(path.rstrip("/").rsplit("/", 1)[-1], {})

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("connection failed: Connection refused")

    # In a savepoint, rolled back once the database is back, so that the test's transaction lives on.
    with transaction.atomic():
        with world.monkeypatch.context() as patch:
            patch.setattr(connection, "cursor", refused)
            # The move path's read and write take their cursor of their own (prepared statements).
            patch.setattr(persistence, "_cursor", refused)
            # Health asks a probe of its own, on a connection of its thread's.
            patch.setattr(health, "database_answers", lambda within: False)
            return send(world, method, target, body=body)


def _streams_full(world: World, method: str, path: str) -> Response:
    """Every stream slot of the player taken (tests/games/test_stream_leases.py opens them for real)."""
    with override_settings(STREAMS_PER_PLAYER=0):
        return send(world, method, _path(path, game_id=world.game()["id"]))


def _rotated_twice(world: World, method: str, path: str) -> Response:
    assert send(world, method, path).status_code == 200
    return send(world, method, path)


def _forged_ticket(world: World, method: str, path: str) -> Response:
    target = _path(path, game_id=world.game()["id"]) + "?ticket=not-a-ticket"
    return send(world, method, target, client=APIClient())


def _beside_a_ranked_attempt(call: Call) -> Call:
    def scenario(world: World, method: str, path: str) -> Response:
        world.ranked_attempt()
        return call(world, method, path)

    return scenario


PERSON = {"kind": "person"}


def _crowded_name(world: World, method: str, path: str) -> Response:
    """Every discriminator of the skeleton that `Crowd` and `CROWD` share is taken."""
    skeleton = name_skeleton("Crowd")
    Player.objects.bulk_create(
        Player(name="Crowd", name_skeleton=skeleton, discriminator=number, token_hash=f"{number:064d}")
        for number in range(DISCRIMINATOR_MIN, DISCRIMINATOR_MAX + 1)
    )
    return send(world, method, path, body={"name": "CROWD"})


def _stranger(world: World) -> APIClient:
    """Another player's client."""
    client = APIClient()
    token = client.post("/api/v1/players", {"name": "Grace"}, format="json").json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def _waiting_table(world: World) -> str:
    return str(world.game(seats=[PERSON, PERSON])["id"])


def _joined(world: World, *, people: int) -> str:
    """A table another player made for `people` people, at which the world's player took seat 1 (it starts
    when that was the last seat)."""
    table = _stranger(world).post("/api/v1/games", {"seats": [PERSON] * people}, format="json").json()
    assert world.client.post(table["invitation"]["join"]).status_code == 200
    return str(table["id"])


def _joined_started(world: World) -> str:
    """seat 0 (the other player) is to move."""
    return _joined(world, people=2)


def _joined_waiting(world: World) -> str:
    return _joined(world, people=3)


def _join(prepare: Callable[[APIClient, str], None]) -> Call:
    """A join, by the world's player, of a table for two that another player made and `prepare(creator,
    table id)` then changed."""

    def call(world: World, method: str, path: str) -> Response:
        creator = _stranger(world)
        table = creator.post("/api/v1/games", {"seats": [PERSON, PERSON]}, format="json").json()
        prepare(creator, table["id"])
        return send(world, method, _path(path, code=table["invitation"]["code"]))

    return call


def _taken_by_a_third(creator: APIClient, game_id: str) -> None:
    code = creator.get(f"/api/v1/games/{game_id}").json()["invitation"]["code"]
    third = APIClient()
    token = third.post("/api/v1/players", {"name": "Hedy"}, format="json").json()["token"]
    third.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert third.post(f"/api/v1/invitations/{code}").status_code == 200


def _started_by_the_creator(creator: APIClient, game_id: str) -> None:
    assert creator.post(f"/api/v1/games/{game_id}/start").status_code == 200


def _clocked(world: World) -> str:
    return str(world.game(seats=[PERSON, {"kind": "computer"}], turn_seconds=60)["id"])


def _replace(make: Callable[[World], str], seat: int) -> Call:
    """A replace of `seat`, by the world's player, at the game `make` gives."""

    def call(world: World, method: str, path: str) -> Response:
        return send(world, method, _path(path, game_id=make(world), seat=str(seat)))

    return call


def _method_not_allowed(world: World, method: str, path: str) -> Response:
    """PUT, which no URL of the API takes: 405 with the methods the URL does take in Allow."""
    target = _path(path, game_id=world.game()["id"], day=TODAY, code="no-such-code")
    response: Response = world.client.put(target)
    allowed = {name.strip() for name in response["Allow"].split(",")}
    assert method.upper() in allowed and "PUT" not in allowed, response["Allow"]
    return response


def _not_acceptable(world: World, method: str, path: str) -> Response:
    """An Accept header naming only what the API does not answer in: 406 before anything else is read."""
    target = _path(path, game_id=world.game()["id"], day=TODAY, code="no-such-code")
    return send(world, method, target, HTTP_ACCEPT="text/html")


# Codes whose scenario is the same on every operation that documents them.
SHARED: dict[str, Call] = {
    "method_not_allowed": _method_not_allowed,
    "not_acceptable": _not_acceptable,
    "not_authenticated": _unauthenticated,
    "invalid_token": _stale_token,
    "rate_limited": _rate_limited,
    "malformed_json": _raw('{"moves": '),
    "json_too_deep": _raw('{"moves": ' + "[" * 40 + "]" * 40 + "}"),
    "unsupported_media_type": _raw("moves=end_turn", "text/plain"),
    "body_too_large": _too_large,
    "database_unavailable": _database_down,
    "length_required": _chunked,
}

RULES = {
    "invalid_rules": 7,
    "unknown_rule_set": "chess",
    "unknown_rule_option": {"jokers": True},
    "invalid_rule_value": {"draw": "three"},
    "incompatible_rules": {"draw": "until_playable", "draw_timing": "end"},
}

SCENARIOS: dict[tuple[str, str], Call] = {
    ("players_create", "invalid_request"): with_body({"name": ""}),
    ("players_create", "name_crowded"): _crowded_name,
    ("players_token_rotate", "token_rotated"): _rotated_twice,
    ("players_token_rotate", "invalid_idempotency_key"): lambda world, method, path: send(
        world, method, path, HTTP_IDEMPOTENCY_KEY="k" * 256
    ),
    ("games_list", "invalid_status"): on_day(TODAY, query="?status=paused"),
    ("games_list", "invalid_limit"): on_day(TODAY, query="?limit=0"),
    ("games_list", "invalid_cursor"): on_day(TODAY, query="?cursor=not-ours"),
    ("games_create", "invalid_request"): with_body({"opponents": 9}),
    **{("games_create", code): with_body({"rules": rules}) for code, rules in RULES.items()},
    ("games_get", "invalid_request"): on_game(_fresh, query="?since_version=-1"),
    ("games_get", "game_not_found"): on_game(_missing),
    ("games_events", "invalid_request"): on_game(_fresh, query="?after=x"),
    ("games_events", "invalid_limit"): on_game(_fresh, query="?limit=0"),
    ("games_events", "game_not_found"): on_game(_missing),
    ("games_hint", "game_not_found"): on_game(_missing),
    ("games_hint", "hints_refused_in_ranked_attempt"): on_game(World.ranked_attempt),
    ("games_hint", "game_over"): on_game(_finished),
    ("games_hint", "hand_over"): on_game(_between_hands),
    ("games_hint", "attempt_expired"): on_game(_expired_attempt),
    ("games_stream", "invalid_request"): on_game(_fresh, query="?last_event_id=x"),
    ("games_stream", "invalid_ticket"): _forged_ticket,
    ("games_stream", "game_not_found"): on_game(_missing),
    ("games_stream", "too_many_streams"): _streams_full,
    ("games_stream_ticket", "game_not_found"): on_game(_missing),
    ("players_stream", "invalid_request"): on_day(TODAY, query="?last_event_id=x"),
    ("players_stream", "invalid_ticket"): _forged_ticket,
    ("players_stream", "too_many_streams"): _streams_full,
    ("games_moves", "invalid_request"): with_body({"moves": []}),
    ("games_moves", "too_many_moves"): moves(*[{"type": "end_turn"}] * 201),
    ("games_moves", "invalid_move"): moves({"type": "jump"}),
    ("games_moves", "invalid_card"): moves({"type": "play", "card": "ZZ", "to": "N"}),
    ("games_moves", "unknown_pile"): moves({"type": "play", "card": "QD", "to": "X"}),
    ("games_moves", "game_over"): moves({"type": "end_turn"}, make=_finished),
    ("games_moves", "hand_over"): moves({"type": "end_turn"}, make=_between_hands),
    ("games_moves", "attempt_expired"): moves({"type": "end_turn"}, make=_expired_attempt),
    ("games_moves", "card_not_in_hand"): moves(
        {"type": "play", "card": "QD", "to": "N"}, make=lambda w: w.game_where(hand=["5H"], N=["KS"])
    ),
    ("games_moves", "does_not_fit"): moves(
        {"type": "play", "card": "5H", "to": "N"}, make=lambda w: w.game_where(hand=["5H"], N=["9S"])
    ),
    ("games_moves", "nothing_on_ace"): moves(
        {"type": "play", "card": "KD", "to": "N"}, make=lambda w: w.game_where(hand=["KD"], N=["2H", "AS"])
    ),
    ("games_moves", "corner_needs_king"): moves(
        {"type": "play", "card": "5H", "to": "NE"}, make=lambda w: w.game_where(hand=["5H"], N=["9S"])
    ),
    ("games_moves", "no_king_on_empty_side"): moves(
        {"type": "play", "card": "KD", "to": "W"}, make=lambda w: w.game_where(hand=["KD"], N=["9S"])
    ),
    ("games_moves", "corner_pile_cannot_move"): moves(
        {"type": "move_pile", "from": "NE", "to": "N"}, make=lambda w: w.game_where(hand=["5H"], NE=["KS"])
    ),
    ("games_moves", "same_pile"): moves(
        {"type": "move_pile", "from": "N", "to": "N"}, make=lambda w: w.game_where(hand=["5H"], N=["9S"])
    ),
    ("games_moves", "empty_pile"): moves(
        {"type": "move_pile", "from": "W", "to": "N"}, make=lambda w: w.game_where(hand=["5H"], N=["9S"])
    ),
    ("games_moves", "no_pile_into_empty_space"): moves(
        {"type": "move_pile", "from": "N", "to": "W"}, make=lambda w: w.game_where(hand=["5H"], N=["9S"])
    ),
    ("games_hands_deal", "invalid_request"): with_body({"expected_version": "1"}),
    ("games_hands_deal", "hand_in_progress"): on_game(_fresh, body={}),
    ("games_hands_deal", "game_over"): on_game(_finished, body={}),
    ("games_hands_deal", "attempt_expired"): on_game(_expired_attempt, body={}),
    ("games_moves", "game_not_started"): moves({"type": "end_turn"}, make=_waiting_table),
    ("games_moves", "not_your_turn"): moves({"type": "end_turn"}, make=_joined_started),
    ("games_hands_deal", "game_not_started"): on_game(_waiting_table, body={}),
    ("games_hint", "game_not_started"): on_game(_waiting_table),
    ("games_hint", "not_your_turn"): on_game(_joined_started),
    ("invitations_join", "invitation_not_found"): lambda world, method, path: send(
        world, method, _path(path, code="not-an-invitation")
    ),
    ("invitations_get", "invitation_not_found"): lambda world, method, path: send(
        world, method, _path(path, code="not-an-invitation")
    ),
    ("invitations_join", "table_full"): _join(_taken_by_a_third),
    ("invitations_join", "game_started"): _join(_started_by_the_creator),
    ("games_start", "not_creator"): on_game(_joined_waiting),
    ("games_start", "game_started"): on_game(_fresh),
    ("games_invitation_revoke", "not_creator"): on_game(_joined_waiting),
    ("games_invitation_issue", "not_creator"): on_game(_joined_waiting),
    ("games_invitation_issue", "game_started"): on_game(_fresh),
    ("games_seat_replace", "not_found"): _replace(_not_a_uuid, 1),
    ("games_seat_replace", "game_not_found"): _replace(_missing, 1),
    ("games_seat_replace", "seat_not_found"): _replace(_fresh, 7),
    ("games_seat_replace", "seat_is_yours"): _replace(_fresh, 0),
    ("games_seat_replace", "table_has_clock"): _replace(_clocked, 1),
    ("games_seat_replace", "game_not_started"): _replace(_waiting_table, 1),
    ("games_seat_replace", "game_over"): _replace(_finished, 1),
    ("games_seat_replace", "hand_over"): _replace(_between_hands, 1),
    ("games_seat_replace", "seat_not_a_person"): _replace(_fresh, 1),
    ("games_seat_replace", "seat_not_abandoned"): _replace(_joined_started, 0),
    ("games_rematch", "game_not_over"): on_game(_fresh),
    ("analysis", "invalid_request"): with_body({"hand": "QD"}),
    ("analysis", "invalid_card"): with_body({"hand": ["QX"]}),
    **{("analysis", code): with_body({"hand": ["QD"], "rules": rules}) for code, rules in RULES.items()},
    ("analysis", "duplicate_card"): with_body({"hand": ["QD"], "piles": {"N": ["QD"]}}),
    ("analysis", "too_many_cards"): with_body({"hand": ["QD", "KS"], "piles": {"N": ["5C"]}, "stock": 50}),
    ("analysis", "pile_out_of_sequence"): with_body({"hand": ["QD"], "piles": {"N": ["2H", "9S"]}}),
    ("analysis", "corner_without_king"): with_body({"hand": ["QD"], "piles": {"NE": ["QH"]}}),
    ("analysis", "side_pile_starts_with_king"): with_body({"hand": ["QD"], "piles": {"W": ["KH"]}}),
    **{
        (operation, "not_found"): on_game(_not_a_uuid)
        for operation in (
            "games_get",
            "games_events",
            "games_hint",
            "games_start",
            "games_invitation_revoke",
            "games_invitation_issue",
            "games_leave",
            "games_rematch",
            "games_stream",
            "games_stream_ticket",
        )
    },
    **{
        (operation, "game_not_found"): on_game(_missing)
        for operation in (
            "games_start",
            "games_invitation_revoke",
            "games_invitation_issue",
            "games_leave",
            "games_rematch",
        )
    },
    **{
        (operation, "not_found"): on_day("")
        for operation in (
            "daily_day",
            "daily_attempt_create",
            "daily_leaderboard",
            "daily_leaderboard_me",
            "daily_par",
        )
    },
    ("daily_today", "no_daily_deal"): _before_the_first_deal,
    ("daily_attempt_create", "ranked_attempt_open"): _beside_a_ranked_attempt(on_day(TODAY)),
    ("analysis", "analysis_refused_in_ranked_attempt"): _beside_a_ranked_attempt(with_body({"hand": ["QD"]})),
    ("games_leave", "leave_refused_in_ranked_attempt"): on_game(World.ranked_attempt),
    ("daily_day", "invalid_date"): on_day("2026-02-30"),
    ("daily_day", "no_daily_deal"): on_day(TOMORROW),
    ("daily_attempt_create", "invalid_date"): on_day("yesterday"),
    ("daily_attempt_create", "no_daily_deal"): on_day(TOMORROW),
    ("daily_attempt_create", "invalid_request"): with_body({"ranked": False}),
    # The operations that take no body refuse one that says anything (kingscorner.api.fields.no_body).
    **{
        (operation, "invalid_request"): with_body({"name": "Evil"})
        for operation in (
            "invitations_join",
            "games_start",
            "games_invitation_issue",
            "games_leave",
            "games_rematch",
            "games_seat_replace",
            "players_token_rotate",
            "games_stream_ticket",
            "players_stream_ticket",
        )
    },
    ("daily_leaderboard", "invalid_date"): on_day("2026-3-5"),
    ("daily_leaderboard", "no_daily_deal"): on_day(TOMORROW),
    ("daily_leaderboard", "invalid_cursor"): on_day(TODAY, query="?cursor=not-ours"),
    ("daily_leaderboard", "invalid_limit"): on_day(TODAY, query="?limit=101"),
    ("daily_leaderboard_me", "invalid_date"): on_day("2026-13-01"),
    ("daily_leaderboard_me", "no_daily_deal"): on_day(TOMORROW),
    ("daily_leaderboard_me", "no_ranked_result"): on_day(TODAY),
    ("daily_par", "invalid_date"): on_day("2026-03-5"),
    ("daily_par", "no_daily_deal"): on_day(TOMORROW),
    ("daily_par", "par_not_ready"): on_day(TODAY),
    ("daily_anchor", "invalid_date"): on_day(TODAY, query="?date=2026-02-30"),
    ("daily_anchor", "no_season"): on_day(TODAY, query="?date=2025-12-31"),
    ("daily_commitments", "invalid_date"): on_day(TODAY, query="?from=2026-3-1"),
    ("daily_commitments", "invalid_date_range"): on_day(TODAY, query=f"?from={TODAY}&to=2026-03-01"),
    ("daily_commitments", "date_too_far_ahead"): on_day(TODAY, query="?to=2026-04-05"),
}

# What any write to a game is refused for, on both of them.
for operation in ("games_moves", "games_hands_deal"):
    body = {"moves": [{"type": "end_turn"}]} if operation == "games_moves" else {}
    SCENARIOS.update(
        {
            (operation, "invalid_if_match"): on_game(_fresh, body=body, HTTP_IF_MATCH="version three"),
            (operation, "version_mismatch"): on_game(
                _fresh, body={**body, "expected_version": 1}, HTTP_IF_MATCH='"2"'
            ),
            (operation, "invalid_idempotency_key"): on_game(
                _fresh, body=body, HTTP_IDEMPOTENCY_KEY="k" * 256
            ),
            (operation, "game_not_found"): on_game(_missing, body=body),
            (operation, "not_found"): on_game(_not_a_uuid, body=body),
            (operation, "version_conflict"): on_game(_fresh, body={**body, "expected_version": 7}),
            (operation, "idempotency_key_reused"): _key_reused,
        }
    )


# Codes gunicorn (or nginx in front) answers with before Django, on every operation, for a request it cannot
# read: the test client cannot send one. tests/e2e/test_topology.py's
# test_gunicorn_refuses_what_it_cannot_read_as_every_operation_documents drives both through a live gunicorn
# and checks its responses against the served document.
BEFORE_DJANGO = ("malformed_request", "headers_too_large")


def _scenario(operation: str, code: str) -> Call:
    return SCENARIOS.get((operation, code)) or SHARED[code]


@pytest.mark.django_db
def test_each_documented_code_has_a_scenario_here_and_each_scenario_is_documented() -> None:
    documented = documented_codes()
    assert {
        pair
        for pair in documented
        if pair not in SCENARIOS and pair[1] not in SHARED and pair[1] not in BEFORE_DJANGO
    } == set()
    assert set(SCENARIOS) - set(documented) == set()


@pytest.mark.django_db
def test_the_codes_answered_before_django_are_documented_on_every_operation() -> None:
    documented = documented_codes()
    operations = {operation for operation, _ in documented}
    for code in BEFORE_DJANGO:
        assert {operation for operation, documented_code in documented if documented_code == code} == (
            operations
        ), code


@pytest.mark.django_db
@pytest.mark.parametrize(("operation", "code"), sorted(SCENARIOS))
def test_an_operation_sends_each_code_it_documents(
    operation: str, code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    method, path = documented_codes()[(operation, code)]
    response = SCENARIOS[(operation, code)](World(monkeypatch), method, path)
    assert (response.status_code, response["Content-Type"]) == (problem(code).status, PROBLEM), (
        response.content
    )
    assert json.loads(response.content)["code"] == code


@pytest.mark.django_db
@pytest.mark.parametrize("code", sorted(SHARED))
def test_every_operation_that_documents_a_shared_code_sends_it(
    code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    operations = sorted(
        (operation, where)
        for (operation, documented), where in documented_codes().items()
        if documented == code
    )
    assert operations
    for operation, (method, path) in operations:
        if (operation, code) in SCENARIOS:
            continue
        response = SHARED[code](World(monkeypatch), method, path)
        assert (operation, response.status_code, json.loads(response.content)["code"]) == (
            operation,
            problem(code).status,
            code,
        )
