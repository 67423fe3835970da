"""The games API as the tests call it: a client speaking for one player, games played to the end, and the
moves a test picks from a view (sharp's turn, a play, an illegal play)."""

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet
from django.utils import timezone
from rest_framework.test import APIClient

from games.engine import PILES, MoveJson, Rules, State, play_refusal
from games.engine.players import best_turn, threat_of
from games.models import Game, IdempotentRequest

if TYPE_CHECKING:
    # What DRF's test client answers: a response with the request it answered and its body as JSON.
    from rest_framework.response import _MonkeyPatchedResponse as ClientResponse

SEED = "ab" * 32
# A deal whose first turn sharp, reading the others' hand sizes, plays otherwise than at the fixed threat a
# position without hand sizes is read with (what `whole_turn` computes).
SHARP_READS_THE_TABLE_SEED = f"{3:064x}"


@dataclass
class Caller:
    """An API client holding one player's token; `seen` keeps every response body, for checks on them."""

    client: APIClient
    player_id: str
    token: str
    seen: list[tuple[str, Any]] = field(default_factory=list)
    after_each: Callable[["Caller", str, Any], None] | None = None

    def _record(self, path: str, response: "ClientResponse") -> "ClientResponse":
        body = json.loads(response.content) if response.content else None
        self.seen.append((path, body))
        if self.after_each is not None:
            self.after_each(self, path, body)
        return response

    def get(self, path: str, **extra: Any) -> "ClientResponse":
        return self._record(path, self.client.get(path, **extra))

    def post(self, path: str, data: Any = None, **extra: Any) -> "ClientResponse":
        body = json.dumps(data) if data is not None else ""
        return self._record(path, self.client.post(path, body, content_type="application/json", **extra))

    def create_game(self, **body: Any) -> dict[str, Any]:
        seed = body.get("seed")
        waiting_seed = seed if seed is not None and with_another_person(body) else None
        if waiting_seed is not None:
            del body["seed"]
        response = self.post("/api/v1/games", body)
        assert response.status_code == 201, response.content
        made = dict(response.json())
        if waiting_seed is not None:
            seed_while_waiting(made, waiting_seed)
        return made

    def moves(
        self, game: dict[str, Any], moves: Sequence[Mapping[str, Any]], **extra: Any
    ) -> "ClientResponse":
        return self.post(
            f"/api/v1/games/{game['id']}/moves",
            {"moves": moves, "expected_version": game["version"]},
            **extra,
        )


def with_another_person(body: Mapping[str, Any]) -> bool:
    """Whether a POST games body makes a table with another person, which the API deals from a seed nobody
    chose (it refuses `seed` there)."""
    return any(seat.get("kind") == "person" for seat in body.get("seats", [])[1:])


def seed_while_waiting(made: Mapping[str, Any], seed: str) -> None:
    """Fixes the seed of a table with another person in the database while it waits, before anything is dealt
    from it, so that a test's deal is the same every run."""
    assert made["status"] == "waiting"
    Game.objects.filter(pk=made["id"]).update(seed=seed.lower())


def new_caller(name: str = "Ada") -> Caller:
    client = APIClient()
    response = client.post("/api/v1/players", {"name": name}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {body['token']}")
    return Caller(client=client, player_id=body["id"], token=body["token"])


def whole_turn(view: dict[str, Any]) -> list[MoveJson]:
    """The moves sharp would make for the rest of the player's turn, computed on the client's side."""
    rules = Rules.from_json(view["rules"])
    return [move.to_json() for move in best_turn(rules, view["hand"], view["table"]["piles"])]


def play_to_the_end(caller: Caller, view: dict[str, Any], *, max_requests: int = 2000) -> dict[str, Any]:
    """Plays whole turns (and deals new hands) through the API until the game is finished."""
    for _ in range(max_requests):
        if view["status"] == "finished":
            return view
        if view["status"] == "hand_over":
            response = caller.post(f"/api/v1/games/{view['id']}/hands", {"expected_version": view["version"]})
        else:
            assert view["is_your_turn"]
            response = caller.moves(view, whole_turn(view))
        assert response.status_code == 200, response.content
        view = response.json()
    raise AssertionError("the game did not end")


def sharps_turn(view: dict[str, Any]) -> list[MoveJson]:
    """The rest of the turn as sharp's search plays it from seat 0, reading the hand sizes as a computer
    player in that seat does."""
    state = State.from_json(Game.objects.get(id=view["id"]).state)
    threat = threat_of([len(hand) for hand in state.hands], 0)
    return [move.to_json() for move in best_turn(state.rules, state.hands[0], state.piles, threat=threat)]


def a_play(view: dict[str, Any]) -> dict[str, Any]:
    return next(move for move in view["legal_moves"] if move["type"] == "play")


def an_illegal_play(view: dict[str, Any]) -> dict[str, Any]:
    rules = Rules.from_json(view["rules"])
    piles = view["table"]["piles"]
    for card in view["hand"]:
        for to in PILES:
            refusal = play_refusal(rules, piles, card, to)
            if refusal is not None and refusal[0] == "does_not_fit":
                return {"type": "play", "card": card, "to": to}
    raise AssertionError("every card fits everywhere")


def game_with_a_play(caller: Caller, **body: Any) -> dict[str, Any]:
    for index in range(50):
        view = caller.create_game(seed=f"{index:064x}", **body)
        if any(move["type"] == "play" for move in view["legal_moves"]):
            return view
    raise AssertionError("no deal with a play")


def backdate(rows: QuerySet[IdempotentRequest], hours: float) -> None:
    """Makes the remembered requests `rows` as old as `hours`."""
    rows.update(created_at=timezone.now() - timedelta(hours=hours))


def shown(name: str) -> str:
    """How the views show the one player of the test named `name`: with its discriminator, `Ada#4821`."""
    from games.models import Player

    return Player.objects.get(name=name).display_name
