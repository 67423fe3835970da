"""Invitations: a link seats whoever has it while the table waits, a person takes one seat at most, joins
are refused clearly once the table is full, started or the link revoked, and a revoked link is issued again
with a new code. Races on PostgreSQL from real
threads: joins for the last seat (exactly one wins), and writes from two seats at one version."""

from collections import Counter
from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import Game, GameMove, GameSeat
from tests.support.games import SEED, new_caller, whole_turn
from tests.support.problems import assert_problem
from tests.support.races import race, split
from tests.support.tables import PERSON, computer, seat_table


def _client(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.mark.django_db
def test_a_link_seats_people_in_order_and_the_last_seat_starts_the_table() -> None:
    creator = new_caller("Ada")
    made = creator.create_game(seats=[PERSON, computer("easy"), PERSON, PERSON], seed=SEED)
    assert made["status"] == "waiting" and made["version"] == 1
    code = made["invitation"]["code"]
    assert len(code) >= 32 and made["invitation"]["join"] == f"http://testserver/api/v1/invitations/{code}"
    grace, hedy = new_caller("Grace"), new_caller("Hedy")
    first = grace.post(made["invitation"]["join"])
    assert first.status_code == 200 and first["ETag"] == '"2"'
    assert first.json()["your_seat"] == 2 and first.json()["status"] == "waiting"
    # A retry answers with the same seat; the person still holds one.
    again = grace.post(made["invitation"]["join"])
    assert again.status_code == 200 and again.json()["your_seat"] == 2
    assert GameSeat.objects.filter(game_id=made["id"], player_id=grace.player_id).count() == 1
    last = hedy.post(made["invitation"]["join"]).json()
    assert last["your_seat"] == 3 and last["status"] == "playing" and last["invitation"] is None
    assert [event["type"] for event in last["events"]][:3] == ["seat_taken", "game_started", "deal"]
    # Once started, the retry of a seated person still answers with their view.
    assert grace.post(made["invitation"]["join"]).json()["status"] == "playing"


@pytest.mark.django_db
def test_the_link_to_share_is_the_join_page_and_join_is_the_api_endpoint() -> None:
    made = new_caller("Ada").create_game(seats=[PERSON, PERSON])
    code = made["invitation"]["code"]
    assert made["invitation"]["url"] == f"http://testserver/play/join/{code}"
    assert made["invitation"]["join"] == f"http://testserver/api/v1/invitations/{code}"
    # The link a person opens is a page of the web client, not the endpoint.
    page = APIClient().get(f"/play/join/{code}")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_an_invitation_shows_who_invites_the_seats_rules_and_clock_to_anyone_with_the_code() -> None:
    creator = new_caller("Ada")
    seats = [PERSON, computer("sharp"), PERSON, PERSON]
    made = creator.create_game(seats=seats, turn_seconds=120, target_score=50, rules="any_space", seed=SEED)
    join = made["invitation"]["join"]
    # No token is needed to look: the code is what a person was sent.
    seen = APIClient().get(join)
    assert seen.status_code == 200, seen.content
    preview = seen.json()
    assert preview["inviter"] == creator.get("/api/v1/players/me").json()["display_name"]
    assert preview["status"] == "waiting" and preview["free_seats"] == 2 and preview["game"] is None
    assert (preview["turn_seconds"], preview["target_score"], preview["rules"]["preset"]) == (
        120,
        50,
        "any_space",
    )
    assert [(seat["kind"], seat["name"], seat["level"]) for seat in preview["seats"]] == [
        ("person", preview["inviter"], None),
        ("computer", "Millie", "sharp"),
        ("person", None, None),
        ("person", None, None),
    ]
    assert (preview["url"], preview["join"]) == (made["invitation"]["url"], join)
    assert not any(key in preview for key in ("hand", "table", "seed"))
    # Once seated, the caller's seat and the game are named; a stranger still sees neither.
    grace = new_caller("Grace")
    assert grace.post(join).status_code == 200
    mine = grace.get(join).json()
    assert mine["game"] == made["id"] and mine["free_seats"] == 1
    assert [seat["you"] for seat in mine["seats"]] == [False, False, True, False]
    assert APIClient().get(join).json()["game"] is None
    # The table started: the invitation says so, and takes nobody.
    assert new_caller("Hedy").post(join).status_code == 200
    started = APIClient().get(join).json()
    assert (started["status"], started["free_seats"]) == ("playing", 0)


@pytest.mark.django_db
def test_an_unknown_or_revoked_invitation_is_not_found_when_looked_at() -> None:
    creator = new_caller("Ada")
    made = creator.create_game(seats=[PERSON, PERSON])
    assert creator.client.delete(f"/api/v1/games/{made['id']}/invitation").status_code == 204
    gone = assert_problem(APIClient().get(made["invitation"]["join"]), 404, "invitation_not_found")
    unknown = assert_problem(APIClient().get("/api/v1/invitations/no-such-code"), 404, "invitation_not_found")
    assert gone["detail"] == unknown["detail"] and made["id"] not in gone["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize("code", ["ab%00cd", "%00", "caf%C3%A9", "a" * 65, "a.b", "%20", "a%2Fb", "a/b"])
def test_a_string_no_code_can_be_is_an_unknown_invitation_whether_looked_at_or_joined(code: str) -> None:
    """A NUL (which PostgreSQL's text cannot hold, and refused with an error: a 500) or any character outside
    the codes' URL-safe alphabet, or a code longer than the column: 404 invitation_not_found, as any unknown
    code, never a server error."""
    caller = new_caller("Ada")
    caller.create_game(seats=[PERSON, PERSON])
    assert_problem(APIClient().get(f"/api/v1/invitations/{code}"), 404, "invitation_not_found")
    assert_problem(caller.post(f"/api/v1/invitations/{code}"), 404, "invitation_not_found")


@pytest.mark.django_db
def test_joins_are_refused_once_the_table_is_full_started_or_the_link_revoked() -> None:
    full = seat_table([PERSON, PERSON])
    late = new_caller("Late")
    # The link is gone from the views once the table started: it is read from the game.
    url = f"/api/v1/invitations/{Game.objects.get(id=full.id).invitation_code}"
    assert_problem(late.post(url), 409, "table_full")

    creator = new_caller("Ada")
    started = creator.create_game(seats=[PERSON, PERSON])
    assert creator.post(f"/api/v1/games/{started['id']}/start").status_code == 200
    assert_problem(late.post(started["invitation"]["join"]), 409, "game_started")

    revoked = creator.create_game(seats=[PERSON, PERSON])
    guest = new_caller("Guest")
    assert_problem(guest.client.delete(f"/api/v1/games/{revoked['id']}/invitation"), 404, "game_not_found")
    assert creator.client.delete(f"/api/v1/games/{revoked['id']}/invitation").status_code == 204
    assert creator.client.delete(f"/api/v1/games/{revoked['id']}/invitation").status_code == 204
    gone = assert_problem(late.post(revoked["invitation"]["join"]), 404, "invitation_not_found")
    assert revoked["id"] not in gone["detail"]
    assert creator.get(f"/api/v1/games/{revoked['id']}").json()["invitation"] is None
    unknown = assert_problem(late.post("/api/v1/invitations/no-such-code"), 404, "invitation_not_found")
    assert unknown["detail"] == gone["detail"]


@pytest.mark.django_db
def test_a_person_seated_at_a_waiting_table_may_not_revoke_or_start_it_unless_they_made_it() -> None:
    creator = new_caller("Ada")
    made = creator.create_game(seats=[PERSON, PERSON, PERSON])
    guest = new_caller("Grace")
    guest.post(made["invitation"]["join"])
    assert_problem(guest.client.delete(f"/api/v1/games/{made['id']}/invitation"), 403, "not_creator")
    assert creator.get(f"/api/v1/games/{made['id']}").json()["invitation"] is not None


@pytest.mark.django_db
def test_a_revoked_invitation_is_issued_again_with_a_new_code_and_the_old_one_stays_dead() -> None:
    creator = new_caller("Ada")
    made = creator.create_game(seats=[PERSON, PERSON, PERSON])
    path = f"/api/v1/games/{made['id']}/invitation"
    # While the link is live it is kept: 200 with it, nothing changed.
    live = creator.post(path)
    assert live.status_code == 200 and live.json() == made["invitation"] and not live.has_header("Location")
    assert creator.client.delete(path).status_code == 204
    issued = creator.post(path)
    assert issued.status_code == 201, issued.content
    new = issued.json()
    assert new["code"] != made["invitation"]["code"] and len(new["code"]) >= 32
    assert issued["Location"] == new["join"] == f"http://testserver/api/v1/invitations/{new['code']}"
    assert creator.post(path).json() == new
    view = creator.get(f"/api/v1/games/{made['id']}").json()
    assert view["invitation"] == new and view["version"] == made["version"]
    guest = new_caller("Grace")
    assert_problem(guest.post(made["invitation"]["join"]), 404, "invitation_not_found")
    assert guest.post(new["join"]).json()["your_seat"] == 1


@pytest.mark.django_db
def test_an_invitation_is_issued_by_the_creator_only_and_while_the_table_waits() -> None:
    creator = new_caller("Ada")
    made = creator.create_game(seats=[PERSON, PERSON, PERSON])
    path = f"/api/v1/games/{made['id']}/invitation"
    guest = new_caller("Grace")
    assert guest.post(made["invitation"]["join"]).status_code == 200
    assert creator.client.delete(path).status_code == 204
    assert_problem(guest.post(path), 403, "not_creator")
    assert_problem(new_caller("Mallory").post(path), 404, "game_not_found")
    assert Game.objects.get(id=made["id"]).invitation_revoked_at is not None
    # The creator leaves: the role, and with it the invitation, passes to Grace.
    assert creator.post(f"/api/v1/games/{made['id']}/leave").status_code == 204
    assert guest.post(path).status_code == 201
    assert guest.post(f"/api/v1/games/{made['id']}/start").status_code == 200
    assert_problem(guest.post(path), 409, "game_started")
    solo = creator.create_game(opponents=1)
    assert_problem(creator.post(f"/api/v1/games/{solo['id']}/invitation"), 409, "game_started")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_eight_joins_raced_for_the_last_seat_seat_exactly_one() -> None:
    creator = new_caller("Ada")
    made = creator.create_game(seats=[PERSON, PERSON, computer("easy")], seed=SEED)
    racers = [new_caller(f"Racer {index}") for index in range(8)]
    queue = list(racers)

    def join() -> tuple[str, Any]:
        racer = queue.pop()
        return racer.player_id, _client(racer.token).post(made["invitation"]["join"])

    outcomes, errors = split(race(len(racers), join))
    assert errors == []
    statuses = Counter(response.status_code for _, response in outcomes)
    assert statuses == Counter({200: 1, 409: 7})
    assert {response.json()["code"] for _, response in outcomes if response.status_code == 409} == {
        "table_full"
    }
    [winner] = [player for player, response in outcomes if response.status_code == 200]
    seat = GameSeat.objects.get(game_id=made["id"], seat=1)
    assert str(seat.player_id) == winner
    game = Game.objects.get(id=made["id"])
    assert game.status == "playing"
    assert GameMove.objects.filter(game=game, move={"type": "deal"}).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_person_s_joins_raced_take_one_seat() -> None:
    creator = new_caller("Ada")
    made = creator.create_game(seats=[PERSON, PERSON, PERSON], seed=SEED)
    guest = new_caller("Grace")
    outcomes, errors = split(race(4, lambda: _client(guest.token).post(made["invitation"]["join"])))
    assert errors == [] and {response.status_code for response in outcomes} == {200}
    assert {response.json()["your_seat"] for response in outcomes} == {1}
    assert GameSeat.objects.filter(game_id=made["id"], player_id=guest.player_id).count() == 1
    assert Game.objects.get(id=made["id"]).status == "waiting"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_moves_raced_from_two_seats_at_one_version_apply_once() -> None:
    table = seat_table([PERSON, PERSON, computer("easy")], seed=SEED)
    view = table.view(0)
    assert view["current_seat"] == 0
    version = view["version"]
    senders = [table.people[0], table.people[1], table.people[0], table.people[1]]

    def send() -> Any:
        sender = senders.pop()
        return _client(sender.token).post(
            f"/api/v1/games/{table.id}/moves",
            {"moves": [{"type": "end_turn"}], "expected_version": version},
            format="json",
        )

    outcomes, errors = split(race(4, send))
    assert errors == []
    assert sorted(response.status_code for response in outcomes) == [200, 409, 409, 409]
    codes = {response.json()["code"] for response in outcomes if response.status_code == 409}
    assert codes <= {"version_conflict", "not_your_turn"}
    game = Game.objects.get(id=table.id)
    assert game.version == version + 1
    assert GameMove.objects.filter(game=game, seat=0, move={"type": "end_turn"}).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_next_hands_raced_from_two_seats_deal_once() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED, target_score=200)
    view = table.view(0)
    while view["status"] == "playing":
        mover = view["current_seat"]
        mine = table.view(mover)
        assert table.people[mover].moves(mine, whole_turn(mine)).status_code == 200
        view = table.view(0)
    version = view["version"]
    senders = [table.people[0], table.people[1]] * 2

    def deal() -> Any:
        sender = senders.pop()
        return _client(sender.token).post(f"/api/v1/games/{table.id}/hands", {}, format="json")

    outcomes, errors = split(race(4, deal))
    assert errors == []
    assert sorted(response.status_code for response in outcomes) == [200, 409, 409, 409]
    # A deal that read the hand over and lost the write is a version_conflict; one that read it dealt is
    # refused by the engine.
    assert {response.json()["code"] for response in outcomes if response.status_code == 409} <= {
        "hand_in_progress",
        "version_conflict",
    }
    game = Game.objects.get(id=table.id)
    assert game.version == version + 1 and game.hand_number == 2
