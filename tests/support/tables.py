"""Tooling for the tests of tables with several people: a table made and filled over HTTP, played to the end
by whoever is to move, and the check that each response shows its seat only what that seat may see."""

import copy
import json
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from games.models import Game, GameSeat
from games.services import seating
from tests.support.games import Caller, new_caller, whole_turn

PERSON: dict[str, str] = {"kind": "person"}
# A card code standing alone: rank then suit, upper case (ids and seeds are lower-case hex).
CARD = re.compile(r"(?<![A-Za-z0-9_-])(?:[A2-9TJQK][CDHS])(?![A-Za-z0-9_-])")


def computer(level: str = "normal") -> dict[str, str]:
    return {"kind": "computer", "level": level}


def public_part(view: dict[str, Any]) -> dict[str, Any]:
    """A view without the members that may name cards (its own hand, the table, its legal moves, the last
    hand's result, the invitation's random code) and without the cards that events make public (plays, pile
    moves, the deal's piles, the hands shown when a hand ends, the seat's own draws): what is left must name
    no card at all."""
    rest = copy.deepcopy(view)
    for name in ("hand", "table", "legal_moves", "hand_result", "invitation"):
        rest.pop(name, None)
    rest["events"] = [public_event(event, view["your_seat"]) for event in rest.get("events", [])]
    return rest


def public_event(event: dict[str, Any], seat: int) -> dict[str, Any]:
    event = dict(event)
    kind = event["type"]
    if kind == "draw" and event["seat"] == seat:
        event.pop("card", None)
    elif kind == "play":
        event.pop("card")
    elif kind == "move_pile":
        event.pop("cards")
    elif kind == "deal":
        event.pop("piles")
    elif kind == "hand_over":
        event.pop("hands")
    return event


def check_events(events: list[dict[str, Any]], seat: int) -> None:
    """Each draw names its card to the seat that drew it only, and nothing else names a hidden card."""
    for event in events:
        if event["type"] == "draw":
            assert ("card" in event) == (event["seat"] == seat), (seat, event)
    leaked = CARD.findall(json.dumps([public_event(event, seat) for event in events]))
    assert leaked == [], (seat, leaked)


def check_view(view: dict[str, Any]) -> None:
    """The view shows its seat its own hand as the game holds it now, legal moves from that hand only, and no
    other card that is hidden from the seat."""
    seat = view["your_seat"]
    assert [entry["you"] for entry in view["seats"]] == [entry["seat"] == seat for entry in view["seats"]]
    game = Game.objects.get(id=view["id"])
    # The seats on the game's row, which the move path reads, are the seats' rows.
    assert game.seating == seating(list(GameSeat.objects.filter(game=game).order_by("seat")))
    state = game.state
    own = state["hands"][seat] if state else []
    assert view["hand"] == own
    for move in view["legal_moves"]:
        assert move.get("card") is None or move["card"] in own
    if state:
        assert view["table"]["piles"] == state["piles"]
    if view["status"] != "finished":
        assert view["seed"] is None
    check_events(view["events"], seat)
    leaked = CARD.findall(json.dumps(public_part(view)))
    assert leaked == [], (seat, leaked)


def scan(caller: Caller, path: str, body: Any) -> None:
    """After every response: a game view is checked for its seat."""
    if isinstance(body, dict) and "your_seat" in body and "hand" in body:
        check_view(body)
    if isinstance(body, dict) and "current" in body:
        check_view(body["current"])


@dataclass
class Table:
    """A table over HTTP: its id and the callers of its people by seat."""

    id: str
    people: dict[int, Caller] = field(default_factory=dict)

    def view(self, seat: int) -> dict[str, Any]:
        response = self.people[seat].get(f"/api/v1/games/{self.id}")
        assert response.status_code == 200, response.content
        return dict(response.json())


def seat_table(
    seats: list[dict[str, str]], names: tuple[str, ...] = ("Ada", "Grace", "Hedy", "Joan"), **options: Any
) -> Table:
    """A table with `seats`, made by the first name's player; the others join by its invitation, in seat
    order. Every response is scanned."""
    creator = new_caller(names[0])
    creator.after_each = scan
    made = creator.create_game(seats=seats, **options)
    table = Table(id=made["id"], people={0: creator})
    url = made["invitation"]["join"] if made["invitation"] else None
    for seat, spec in enumerate(seats[1:], start=1):
        if spec["kind"] != "person":
            continue
        joiner = new_caller(names[seat])
        joiner.after_each = scan
        assert url is not None
        response = joiner.post(url)
        assert response.status_code == 200, response.content
        assert response.json()["your_seat"] == seat
        table.people[seat] = joiner
    return table


def check_hints(table: Table, mover: int, hand: list[str]) -> None:
    """The seat to move gets a hint that plays its own cards only; every other person is refused one."""
    for seat, caller in table.people.items():
        response = caller.get(f"/api/v1/games/{table.id}/hint")
        if seat != mover:
            assert (response.status_code, response.json()["code"]) == (409, "not_your_turn")
            continue
        assert response.status_code == 200, response.content
        for move in response.json()["moves"]:
            assert move["type"] != "play" or move["card"] in hand


def play_table(table: Table, *, dealer: int, max_requests: int = 3000) -> dict[int, dict[str, Any]]:
    """Plays the table to the end: whoever is to move plays sharp's whole turn, computed on their side from
    their own view, once every person has asked for a hint; `dealer` (a person) deals each next hand. Returns
    every person's last view."""
    for _ in range(max_requests):
        any_seat = next(iter(table.people))
        view = table.view(any_seat)
        if view["status"] == "finished":
            return {seat: table.view(seat) for seat in table.people}
        if view["status"] == "hand_over":
            response = table.people[dealer].post(
                f"/api/v1/games/{table.id}/hands", {"expected_version": view["version"]}
            )
        else:
            mover = view["current_seat"]
            assert mover in table.people, view["seats"]
            mine = table.view(mover)
            assert mine["is_your_turn"]
            check_hints(table, mover, mine["hand"])
            response = table.people[mover].moves(mine, whole_turn(mine))
        assert response.status_code == 200, response.content
    raise AssertionError("the game did not end")


def turn_aged(game_id: str, seconds: int) -> None:
    """The current person's turn began `seconds` earlier than it did, as if they had been away that long
    (the abandonment rule counts from the turn's start)."""
    began = Game.objects.get(id=game_id).turn_started_at
    assert began is not None, "no person is to move"
    Game.objects.filter(id=game_id).update(turn_started_at=began - timedelta(seconds=seconds))
