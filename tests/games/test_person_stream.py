"""The person stream, GET players/me/stream: every event reaches the people it concerns and nobody else, in
each person's own contiguous sequence; resuming after an id gives exactly what follows; `resync` after a
pruned or unknown id; the tickets bound to one stream; the daily broadcasts taken in once; and, held open by
uvicorn, new events as their writes commit, until the token is rotated. The game stream's `turn_start`
deadline and the finished game's `rematch` are here too."""

import json
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import Any

import pytest
from django.conf import settings
from django.db import transaction
from django.http import StreamingHttpResponse
from django.test import override_settings
from django.utils import timezone
from openapi_schema_validator import OAS31Validator
from rest_framework.test import APIClient

from daily import clock, services
from daily.models import DailyDeal
from games.models import Game, PersonBroadcast, PersonEvent
from games.services import person_feed
from tests.support.games import SEED, Caller, new_caller, play_to_the_end, whole_turn
from tests.support.openapi import served_document
from tests.support.problems import assert_problem
from tests.support.streams import EventStreamClient, LiveAsgiServer, Message, listening_streams
from tests.support.tables import PERSON, Table, computer, seat_table, turn_aged

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

PERSON_STREAM = "/api/v1/players/me/stream"
# A game id for events stored directly.
A_GAME = "00000000-0000-4000-8000-000000000001"
# Nothing of a person event may name a card, a hand, the stock or a seed.
HIDDEN = {"card", "cards", "hand", "hands", "stock", "seed", "piles"}


@pytest.fixture(scope="module")
def server() -> Iterator[LiveAsgiServer]:
    live = LiveAsgiServer()
    live.start()
    yield live
    live.stop()


@pytest.fixture(autouse=True)
def _streams_end_with_their_test() -> Iterator[None]:
    yield
    deadline = time.monotonic() + 30
    while listening_streams() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert listening_streams() == 0


def _messages(text: str) -> list[Message]:
    messages = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if "id" in fields:
            data = json.loads(fields["data"])
            messages.append(Message(id=int(fields["id"]), event=fields["event"], data=data))
    return messages


def _feed(caller: Caller, after: int | None = None, **headers: Any) -> list[Message]:
    """The caller's person stream as a WSGI server sends it: every event after `after`, then its end."""
    query = "" if after is None else f"?last_event_id={after}"
    response = caller.client.get(PERSON_STREAM + query, **headers)
    assert response.status_code == 200, response.content
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"].startswith("text/event-stream")
    text = b"".join(response).decode()
    assert text.startswith("retry: 3000\n\n")
    messages = _messages(text)
    for message in messages:
        assert message.id == message.data["seq"] and message.event == message.data["type"]
        assert not HIDDEN & set(message.data), message.data
        _person_event_schema().validate(message.data)
    return messages


@cache
def _person_event_schema() -> OAS31Validator:
    """The served document's PersonEvent: each event is the variant of its type, with its fields only."""
    document = served_document()
    return OAS31Validator({**document, "$ref": "#/components/schemas/PersonEvent"})


def _kinds(messages: list[Message]) -> list[tuple[str | None, dict[str, Any]]]:
    return [
        (message.event, {k: v for k, v in message.data.items() if k not in ("seq", "type", "at")})
        for message in messages
    ]


def _contiguous(messages: list[Message]) -> None:
    assert [message.id for message in messages] == list(range(1, len(messages) + 1))


def _turns(table: Table) -> dict[int, list[dict[str, Any]]]:
    return {
        seat: [data for kind, data in _kinds(_feed(caller)) if kind == "your_turn"]
        for seat, caller in table.people.items()
    }


def test_a_table_tells_its_people_of_seats_taken_the_start_and_their_turn_and_nobody_else() -> None:
    table = seat_table([PERSON, PERSON, computer()], seed=SEED)
    game = table.id
    view = table.view(0)
    mover = view["current_seat"]
    ada, grace = _feed(table.people[0]), _feed(table.people[1])
    _contiguous(ada)
    _contiguous(grace)
    turn = ("your_turn", {"game": game, "seat": mover, "deadline": None})
    assert _kinds(ada) == [
        ("seat_taken", {"game": game, "seat": 1, "name": view["seats"][1]["name"]}),
        ("game_started", {"game": game}),
        *([turn] if mover == 0 else []),
    ]
    # Grace took the seat: she is not told of it.
    assert _kinds(grace) == [("game_started", {"game": game}), *([turn] if mover == 1 else [])]
    assert _feed(new_caller("Bob")) == []


def test_your_turn_comes_once_each_time_a_persons_turn_begins_with_the_clocks_deadline() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED, turn_seconds=120)
    begun: list[tuple[int, str]] = []
    for _ in range(4):
        view = table.view(0)
        mover = view["current_seat"]
        begun.append((mover, view["turn_deadline"]))
        mine = table.view(mover)
        assert table.people[mover].moves(mine, whole_turn(mine)).status_code == 200
    view = table.view(0)
    begun.append((view["current_seat"], view["turn_deadline"]))
    turns = _turns(table)
    for seat in table.people:
        expected = [
            {"game": table.id, "seat": seat, "deadline": deadline} for who, deadline in begun if who == seat
        ]
        assert turns[seat] == expected
    # The game stream's turn_start carries the same deadline, for a person's turn.
    events = table.people[0].get(f"/api/v1/games/{table.id}/events").json()["items"]
    starts = [event for event in events if event["type"] == "turn_start"]
    assert [(event["seat"], event["deadline"]) for event in starts] == begun


def test_a_turn_at_a_table_without_a_clock_has_no_deadline_and_a_solo_game_tells_of_its_end() -> None:
    ada = new_caller("Ada")
    game = ada.create_game(opponents=1, level="easy", target_score=None, seed="ef" * 32)
    final = play_to_the_end(ada, game)
    assert final["status"] == "finished"
    feed = _feed(ada)
    _contiguous(feed)
    kinds = _kinds(feed)
    assert kinds[-1] == ("game_over", {"game": game["id"]})
    assert {data["deadline"] for kind, data in kinds if kind == "your_turn"} == {None}
    events = ada.get(f"/api/v1/games/{game['id']}/events?limit=500").json()["items"]
    own_turns = [event for event in events if event["type"] == "turn_start" and event["seat"] == 0]
    assert [kind for kind, _ in kinds].count("your_turn") == len(own_turns)


def test_a_seat_left_tells_the_others_and_a_revoked_invitation_the_others_seated() -> None:
    ada = new_caller("Ada")
    made = ada.create_game(seats=[PERSON, PERSON, PERSON], seed=SEED)
    grace = new_caller("Grace")
    assert grace.post(made["invitation"]["join"]).status_code == 200
    assert _kinds(_feed(ada)) == [("seat_taken", {"game": made["id"], "seat": 1, "name": shown_name(grace)})]
    assert ada.client.delete(f"/api/v1/games/{made['id']}/invitation").status_code == 204
    assert _kinds(_feed(grace)) == [("invitation_revoked", {"game": made["id"]})]
    # Revoked again, it changes nothing and tells nobody.
    assert ada.client.delete(f"/api/v1/games/{made['id']}/invitation").status_code == 204
    assert len(_feed(grace)) == 1
    assert all(kind != "invitation_revoked" for kind, _ in _kinds(_feed(ada)))
    assert grace.post(f"/api/v1/games/{made['id']}/leave").status_code in (200, 204)
    assert _kinds(_feed(ada, 1)) == [
        ("seat_left", {"game": made["id"], "seat": 1, "name": shown_name(grace)})
    ]
    assert all(kind != "seat_left" for kind, _ in _kinds(_feed(grace)))


def shown_name(caller: Caller) -> str:
    return str(caller.get("/api/v1/players/me").json()["display_name"])


def test_a_replaced_seat_tells_the_absent_person() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED)
    mover = table.view(0)["current_seat"]
    other = 1 - mover
    turn_aged(table.id, 86400 + 1)
    response = table.people[other].post(f"/api/v1/games/{table.id}/seats/{mover}/replace")
    assert response.status_code == 200, response.content
    computer_name = response.json()["seats"][mover]["name"]
    absent = _kinds(_feed(table.people[mover]))
    assert absent[-1] == ("seat_replaced", {"game": table.id, "seat": mover, "by": computer_name})
    assert all(kind != "seat_replaced" for kind, _ in _kinds(_feed(table.people[other])))


def test_a_rematch_reaches_every_person_of_the_finished_game_and_ends_its_log() -> None:
    ada = new_caller("Ada")
    game = ada.create_game(opponents=1, level="easy", target_score=None, seed="ef" * 32)
    play_to_the_end(ada, game)
    rematch = ada.post(f"/api/v1/games/{game['id']}/rematch")
    assert rematch.status_code == 201, rematch.content
    new_game = rematch.json()["id"]
    kinds = _kinds(_feed(ada))
    assert ("rematch", {"game": game["id"], "new_game": new_game}) in kinds
    at = kinds.index(("rematch", {"game": game["id"], "new_game": new_game}))
    assert kinds[at - 1] == ("game_over", {"game": game["id"]})
    events = ada.get(f"/api/v1/games/{game['id']}/events?limit=500").json()["items"]
    assert events[-1]["type"] == "rematch" and events[-1]["new_game"] == new_game
    # Asked again, it is the same rematch: nobody is told twice.
    assert ada.post(f"/api/v1/games/{game['id']}/rematch").status_code == 200
    assert [kind for kind, _ in _kinds(_feed(ada))].count("rematch") == 1


def test_a_rematch_asked_for_by_one_person_reaches_the_other() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED)
    # The table's game is over (played to its end elsewhere in these tests): a rematch may be asked for.
    Game.objects.filter(id=table.id).update(status=Game.Status.FINISHED, finished_at=timezone.now())
    asked = table.people[1].post(f"/api/v1/games/{table.id}/rematch")
    assert asked.status_code == 201, asked.content
    told = ("rematch", {"game": table.id, "new_game": asked.json()["id"]})
    for caller in table.people.values():
        assert _kinds(_feed(caller)).count(told) == 1


def test_resuming_after_an_id_gives_exactly_what_follows_and_the_header_wins() -> None:
    table = seat_table([PERSON, PERSON], seed=SEED)
    ada = table.people[0]
    for _ in range(3):
        view = table.view(0)
        mine = table.view(view["current_seat"])
        table.people[view["current_seat"]].moves(mine, whole_turn(mine))
    every = _feed(ada)
    assert len(every) >= 3
    for after in range(len(every) + 1):
        assert _feed(ada, after) == every[after:]
    assert _feed(ada, 0, HTTP_LAST_EVENT_ID=str(len(every) - 1)) == every[-1:]
    problem = ada.client.get(PERSON_STREAM, HTTP_LAST_EVENT_ID="x")
    assert_problem(problem, 400, "invalid_request")


def test_a_resume_from_a_pruned_or_unknown_id_is_told_to_resync_never_a_silent_gap() -> None:
    table = seat_table([PERSON, PERSON, computer()], seed=SEED)
    ada = table.people[0]
    every = _feed(ada)
    assert len(every) >= 2
    # The first event is older than the retention: the beat job prunes it.
    PersonEvent.objects.filter(player_id=ada.player_id, seq=1).update(
        created_at=timezone.now() - timedelta(seconds=settings.PERSON_EVENTS_RETENTION_SECONDS + 1)
    )
    assert person_feed.person_events_prune() == 1
    # From the start (no id): the oldest events kept, nothing to resync.
    assert _raw_feed(ada) == every[1:]
    # From id 0, the id before the first event (a `resync` may have given it): the pruned first event is a
    # gap like any other, by the header or the query.
    for from_zero in (_raw_feed(ada, HTTP_LAST_EVENT_ID="0"), _raw(ada, "?last_event_id=0")):
        assert from_zero[0].event == "resync" and from_zero[0].data["reason"] == "expired"
        assert from_zero[0].id == 1 and from_zero[1:] == every[1:]
    # After an id whose following events are gone: `resync` (its id the seq before the oldest kept), then
    # the oldest kept.
    PersonEvent.objects.filter(player_id=ada.player_id, seq=2).delete()
    expired = _raw_feed(ada, HTTP_LAST_EVENT_ID="1")
    assert expired[0].event == "resync" and expired[0].data["reason"] == "expired"
    assert expired[0].id == 2
    assert expired[1:] == every[2:]
    # After an id never given: `resync`, then the oldest kept.
    unknown = _raw_feed(ada, HTTP_LAST_EVENT_ID="999")
    assert unknown[0].event == "resync" and unknown[0].data["reason"] == "unknown_id"
    assert unknown[1:] == every[2:]
    # After the resync's id, the stream goes on as from any id: no resync again.
    assert _raw_feed(ada, HTTP_LAST_EVENT_ID=str(expired[0].id)) == every[2:]
    # Every event pruned: a stream opened with no id has nothing to tell and no position to lose (it looped
    # on its empty first page); one that resumes from an id before them is told to resync.
    PersonEvent.objects.filter(player_id=ada.player_id).delete()
    assert _raw_feed(ada) == []
    resumed = _raw_feed(ada, HTTP_LAST_EVENT_ID="0")
    assert [(message.event, message.id) for message in resumed] == [("resync", every[-1].id)]


def _aged(player_id: str, seqs: list[int], seconds: float) -> None:
    PersonEvent.objects.filter(player_id=player_id, seq__in=seqs).update(
        created_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_a_broadcast_taken_in_is_kept_as_long_as_the_events_stored_after_it() -> None:
    """Retention counts from when a row is stored: a broadcast just under the retention old, taken in
    after events six days old, outlives them (its `at` is still the broadcast's)."""
    day = 24 * 3600
    ada = new_caller("Ada")
    for kind in ("game_over", "game_over"):
        person_feed.person_events_add([person_feed.PersonNotice(ada.player_id, kind, {"game": A_GAME})])
    _aged(ada.player_id, [1, 2], 6 * day)
    with transaction.atomic():
        person_feed.person_broadcast(
            type="daily_deal", key="daily_deal:2026-03-05", data={"date": "2026-03-05"}
        )
    told = timezone.now() - timedelta(seconds=7 * day - 60)
    PersonBroadcast.objects.filter(key="daily_deal:2026-03-05").update(created_at=told)
    taken = _feed(ada)
    assert [message.event for message in taken] == ["game_over", "game_over", "daily_deal"]
    assert datetime.fromisoformat(taken[2].data["at"]) == told
    person_feed.person_events_add([person_feed.PersonNotice(ada.player_id, "game_over", {"game": A_GAME})])
    with override_settings(PERSON_EVENTS_RETENTION_SECONDS=6.5 * day):
        assert person_feed.person_events_prune() == 0
    assert [message.id for message in _raw_feed(ada, HTTP_LAST_EVENT_ID="1")] == [2, 3, 4]


def test_a_gap_between_two_events_kept_is_told_by_a_resync_in_its_place() -> None:
    ada = new_caller("Ada")
    for _ in range(4):
        person_feed.person_events_add(
            [person_feed.PersonNotice(ada.player_id, "game_over", {"game": A_GAME})]
        )
    PersonEvent.objects.filter(player_id=ada.player_id, seq=3).delete()
    resumed = _raw_feed(ada, HTTP_LAST_EVENT_ID="1")
    assert [(message.id, message.event) for message in resumed] == [
        (2, "game_over"),
        (3, "resync"),
        (4, "game_over"),
    ]
    assert resumed[1].data["reason"] == "expired"
    # From the start too: the first event kept needs no resync, a gap after it does.
    assert [message.event for message in _raw_feed(ada)] == ["game_over", "game_over", "resync", "game_over"]


def _raw_feed(caller: Caller, **headers: Any) -> list[Message]:
    return _raw(caller, "", **headers)


def _raw(caller: Caller, query: str, **headers: Any) -> list[Message]:
    response = caller.client.get(PERSON_STREAM + query, **headers)
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    return _messages(b"".join(response).decode())


def _ticket(caller: Caller, path: str) -> dict[str, Any]:
    response = caller.post(path)
    assert response.status_code == 201, response.content
    return dict(response.json())


def test_a_ticket_opens_only_the_stream_it_was_asked_for() -> None:
    ada = new_caller("Ada")
    game = ada.create_game(opponents=1, seed=SEED)
    person = _ticket(ada, "/api/v1/players/me/stream-tickets")
    assert person["url"].endswith(f"{PERSON_STREAM}?ticket={person['ticket']}")
    game_ticket = _ticket(ada, f"/api/v1/games/{game['id']}/stream-tickets")
    anonymous = APIClient()
    opened = anonymous.get(f"{PERSON_STREAM}?ticket={person['ticket']}")
    assert opened.status_code == 200
    assert_problem(anonymous.get(f"{PERSON_STREAM}?ticket={game_ticket['ticket']}"), 401, "invalid_ticket")
    assert_problem(
        anonymous.get(f"/api/v1/games/{game['id']}/stream?ticket={person['ticket']}"), 401, "invalid_ticket"
    )
    assert ada.post("/api/v1/players/me/token").status_code == 200
    assert_problem(anonymous.get(f"{PERSON_STREAM}?ticket={person['ticket']}"), 401, "invalid_ticket")


def test_a_daily_event_reaches_a_person_who_connects_later_once_and_not_one_who_came_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    day = date(2026, 3, 5)
    monkeypatch.setattr(clock, "now", lambda: datetime(2026, 3, 5, 12, 0, tzinfo=UTC))
    ada = new_caller("Ada")
    assert services.daily_events_announce() == ["daily_deal:2026-03-05"]
    assert services.daily_events_announce() == []
    assert DailyDeal.objects.filter(date=day).exists()
    later = new_caller("Grace")
    first = _kinds(_feed(ada))
    assert ("daily_deal", {"date": "2026-03-05"}) in first
    assert _kinds(_feed(ada)) == first
    assert [kind for kind, _ in first].count("daily_deal") == 1
    assert _feed(later) == []
    # The day over: revealed, closed and its par, each once, to both.
    monkeypatch.setattr(clock, "now", lambda: datetime(2026, 3, 6, 12, 0, tzinfo=UTC))
    services.daily_deals_close_due()
    with override_settings(DAILY_PAR_NODE_BUDGET=300):
        services.daily_pars_compute_due()
    assert services.daily_events_announce() == ["daily_deal:2026-03-06"]
    for caller in (ada, later):
        kinds = _kinds(_feed(caller))
        for kind in ("daily_revealed", "daily_closed", "daily_par"):
            assert [data["date"] for k, data in kinds if k == kind].count("2026-03-05") == 1, (kind, kinds)
        _contiguous(_feed(caller))
    assert PersonBroadcast.objects.count() >= 4


def test_a_feed_whose_broadcasts_were_pruned_before_it_took_them_is_told_to_resync() -> None:
    ada = new_caller("Ada")
    with transaction.atomic():
        person_feed.person_broadcast(
            type="daily_deal", key="daily_deal:2026-03-05", data={"date": "2026-03-05"}
        )
    assert _kinds(_feed(ada)) == [("daily_deal", {"date": "2026-03-05"})]
    for day in ("2026-03-06", "2026-03-07"):
        with transaction.atomic():
            person_feed.person_broadcast(type="daily_deal", key=f"daily_deal:{day}", data={"date": day})
    old = timezone.now() - timedelta(seconds=settings.PERSON_EVENTS_RETENTION_SECONDS + 1)
    PersonBroadcast.objects.filter(key="daily_deal:2026-03-06").update(created_at=old)
    person_feed.person_events_prune()
    assert _kinds(_feed(ada, 1)) == [
        ("resync", {"reason": "expired"}),
        ("daily_deal", {"date": "2026-03-07"}),
    ]


# --- held open by uvicorn -----------------------------------------------------------------------------------


def _open(server: LiveAsgiServer, caller: Caller, **headers: str) -> EventStreamClient:
    return EventStreamClient(
        server.port, PERSON_STREAM, headers={"Authorization": f"Bearer {caller.token}", **headers}
    )


@override_settings(STREAM_HEARTBEAT_SECONDS=600.0)
def test_a_held_person_stream_gets_each_event_as_its_write_commits_until_the_token_is_rotated(
    server: LiveAsgiServer,
) -> None:
    ada = new_caller("Ada")
    made = ada.create_game(seats=[PERSON, PERSON, computer()], seed=SEED)
    stream = _open(server, ada)
    try:
        assert stream.status == 200 and stream.next().retry == 3000
        grace = new_caller("Grace")
        assert grace.post(made["invitation"]["join"]).status_code == 200
        taken = stream.next()
        assert (taken.id, taken.event, taken.data["game"]) == (1, "seat_taken", made["id"])
        assert stream.next().event == "game_started"
        assert ada.post("/api/v1/players/me/token").status_code == 200
        rest = stream.rest()
        assert all(message.event != "seat_taken" for message in rest)
    finally:
        stream.close()


@pytest.mark.parametrize("redis_url", [None, ""], ids=["redis", "in-process"])
def test_a_held_person_stream_is_woken_by_a_daily_broadcast(
    server: LiveAsgiServer, redis_url: str | None
) -> None:
    ada = new_caller("Ada")
    # No heartbeat within the test: only the wake-up can bring the event.
    wake_only = {"STREAM_HEARTBEAT_SECONDS": 600.0}
    with override_settings(**wake_only, **({} if redis_url is None else {"REDIS_URL": redis_url})):
        _woken_by_a_broadcast(server, ada)


def _woken_by_a_broadcast(server: LiveAsgiServer, ada: Caller) -> None:
    stream = _open(server, ada)
    try:
        assert stream.next().retry == 3000
        with transaction.atomic():
            person_feed.person_broadcast(
                type="daily_par", key="daily_par:2026-03-04", data={"date": "2026-03-04", "par": 7}
            )
        message = stream.next()
        assert (message.id, message.event, message.data["par"]) == (1, "daily_par", 7)
    finally:
        stream.close()


@override_settings(STREAM_HEARTBEAT_SECONDS=600.0)
def test_a_finished_games_stream_stays_open_for_its_rematch_then_ends(server: LiveAsgiServer) -> None:
    ada = new_caller("Ada")
    game = ada.create_game(opponents=1, level="easy", target_score=None, seed="ef" * 32)
    play_to_the_end(ada, game)
    last = Game.objects.get(id=game["id"]).event_seq
    path = f"/api/v1/games/{game['id']}/stream"
    headers = {"Authorization": f"Bearer {ada.token}", "Last-Event-ID": str(last)}
    stream = EventStreamClient(server.port, path, headers=headers)
    try:
        assert stream.status == 200 and stream.next().retry == 3000
        new_game = ada.post(f"/api/v1/games/{game['id']}/rematch").json()["id"]
        rematch = stream.next()
        assert (rematch.id, rematch.event, rematch.data["new_game"]) == (last + 1, "rematch", new_game)
        assert [message.event for message in stream.rest() if message.event] == []
    finally:
        stream.close()
    again = EventStreamClient(server.port, path, headers={**headers, "Last-Event-ID": str(last + 1)})
    assert again.status == 204
    again.close()
    other = new_caller("Grace")
    finished = other.create_game(opponents=1, level="easy", target_score=None, seed="ef" * 32)
    play_to_the_end(other, finished)
    after = str(Game.objects.get(id=finished["id"]).event_seq)
    with override_settings(REMATCH_STREAM_SECONDS=0):
        closed = EventStreamClient(
            server.port,
            f"/api/v1/games/{finished['id']}/stream",
            headers={"Authorization": f"Bearer {other.token}", "Last-Event-ID": after},
        )
        assert closed.status == 204
        closed.close()


def test_the_documented_person_stream_words_its_refusals_and_example_as_its_own() -> None:
    operation = served_document()["paths"][PERSON_STREAM]["get"]
    refused = operation["responses"]["401"]["description"]
    assert "POST players/me/stream-tickets" in refused and "games/{id}" not in refused
    shown = operation["responses"]["200"]["content"]["text/event-stream"]["examples"]
    for example in shown.values():
        first = example["value"]
        assert example["summary"] == "A table of yours started" and first["event"] == "game_started"
