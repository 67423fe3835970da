"""The event stream, GET games/{id}/stream, served by the ASGI application under uvicorn (in a thread of the
test process): the log as the seat may see it, each new event as its write commits, resumption from
Last-Event-ID with nothing missed and nothing twice, heartbeats, the end of a finished game, stream tickets,
and the stream a WSGI server sends."""

import hashlib
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
import redis
from django.conf import settings
from django.core.cache import caches
from django.http import StreamingHttpResponse
from django.test import override_settings

from games import notifications, streams
from games.models import Game
from kingscorner import cache as cache_module
from tests.support.ci import needs_redis
from tests.support.games import Caller, new_caller, play_to_the_end, whole_turn
from tests.support.problems import PROBLEM, assert_problem
from tests.support.stack import free_port
from tests.support.streams import EventStreamClient, LiveAsgiServer, Message, listening_streams
from tests.support.tables import PERSON, check_events, computer, play_table, seat_table

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

# Cards may be named only by these events: a draw (the drawer's own, in the drawer's stream), a play, a pile
# that moves, the piles of a deal, and every hand once a hand is over.
EVENTS_THAT_NAME_CARDS = {"draw", "play", "move_pile", "deal", "hand_over"}


@pytest.fixture(scope="module")
def server() -> Iterator[LiveAsgiServer]:
    live = LiveAsgiServer()
    live.start()
    yield live
    live.stop()


@pytest.fixture(autouse=True)
def _streams_end_with_their_test() -> Iterator[None]:
    """Each test's streams are over (their clients closed) before the next test runs, so that none reads the
    database after the test's data is gone."""
    yield
    deadline = time.monotonic() + 30
    while listening_streams() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert listening_streams() == 0


@pytest.fixture
def ada(transactional_db: None) -> Caller:
    return new_caller("Ada")


def _ticket(caller: Caller, game_id: str) -> dict[str, Any]:
    response = caller.post(f"/api/v1/games/{game_id}/stream-tickets")
    assert response.status_code == 201, response.content
    return dict(response.json())


def _open(
    server: LiveAsgiServer,
    game_id: str,
    *,
    ticket: str | None = None,
    token: str | None = None,
    query: str = "",
    headers: dict[str, str] | None = None,
) -> EventStreamClient:
    parameters = [part for part in (f"ticket={ticket}" if ticket else "", query) if part]
    path = f"/api/v1/games/{game_id}/stream" + (f"?{'&'.join(parameters)}" if parameters else "")
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return EventStreamClient(server.port, path, headers=sent)


def _log(caller: Caller, game_id: str) -> list[dict[str, Any]]:
    """The event log as the caller's seat may see it, from GET events."""
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        page = caller.get(f"/api/v1/games/{game_id}/events?after={after}").json()
        events += page["items"]
        after = page["more_after"]
        if page["next"] is None:
            return events


def _event_seq(game_id: str) -> int:
    return int(Game.objects.get(id=game_id).event_seq)


def _events(messages: list[Message]) -> list[Message]:
    return [message for message in messages if message.event is not None]


def _assert_seat_sees_only_its_own(events: list[Message], seat: int) -> None:
    for message in events:
        data = message.data
        assert message.id == data["seq"] and message.event == data["type"]
        if data["type"] == "draw" and data["seat"] != seat:
            assert "card" not in data, data
        if data["type"] not in EVENTS_THAT_NAME_CARDS:
            assert not {"card", "cards", "hands", "hand"} & set(data), data


def test_a_stream_sends_the_log_then_each_new_event_as_its_write_commits(
    server: LiveAsgiServer, ada: Caller
) -> None:
    game = ada.create_game(opponents=2, seed="ab" * 32)
    ticket = _ticket(ada, game["id"])
    stream = _open(server, game["id"], ticket=ticket["ticket"])
    try:
        assert stream.status == 200 and stream.headers["content-type"].startswith("text/event-stream")
        assert stream.headers["cache-control"] == "no-cache"
        first = stream.next()
        assert first.retry == 3000
        so_far = stream.events_until(_event_seq(game["id"]))
        # A whole turn, then the computers': one write, whose events come as it commits.
        assert ada.moves(game, whole_turn(game)).json()["version"] == game["version"] + 1
        later = stream.events_until(_event_seq(game["id"]))
    finally:
        stream.close()
    streamed = so_far + later
    assert [message.id for message in streamed] == list(range(1, len(streamed) + 1))
    assert [message.data for message in streamed] == _log(ada, game["id"])
    _assert_seat_sees_only_its_own(streamed, seat=0)


def test_a_stream_reconnecting_mid_hand_with_last_event_id_misses_nothing_and_gets_nothing_twice(
    server: LiveAsgiServer, ada: Caller
) -> None:
    game = ada.create_game(opponents=3, seed="cd" * 32, target_score=None)
    token = ada.token
    received: list[Message] = []
    stream = _open(server, game["id"], token=token)
    received += stream.events_until(_event_seq(game["id"]))
    # Mid-hand: the client goes away after the first half of what it was sent...
    stream.close()
    received = received[: len(received) // 2]
    view = game
    for _ in range(3):
        if view["status"] != "playing":
            break
        view = ada.moves(view, whole_turn(view)).json()
    # ...and comes back, once with the header EventSource sends and once with the query parameter, which
    # the header overrides.
    last = received[-1].id
    assert last is not None
    again = _open(
        server, game["id"], token=token, query="last_event_id=1", headers={"Last-Event-ID": str(last)}
    )
    try:
        received += again.events_until(_event_seq(game["id"]))
    finally:
        again.close()
    log = _log(ada, game["id"])
    assert [message.id for message in received] == [event["seq"] for event in log]
    assert [message.data for message in received] == log
    by_query = _open(server, game["id"], token=token, query=f"last_event_id={last}")
    try:
        assert [message.data for message in by_query.events_until(_event_seq(game["id"]))] == log[last:]
    finally:
        by_query.close()


def test_an_idle_stream_sends_heartbeats(server: LiveAsgiServer, ada: Caller) -> None:
    game = ada.create_game(opponents=1)
    with override_settings(STREAM_HEARTBEAT_SECONDS=0.2):
        stream = _open(
            server, game["id"], token=ada.token, headers={"Last-Event-ID": str(_event_seq(game["id"]))}
        )
        try:
            assert stream.next().retry == 3000
            assert [stream.next().comment for _ in range(3)] == ["heartbeat"] * 3
        finally:
            stream.close()


# Without the window in which a finished game's stream waits for its rematch (test_person_stream.py).
@override_settings(REMATCH_STREAM_SECONDS=0)
def test_a_stream_ends_after_the_last_event_of_a_finished_game_and_a_reconnect_is_told_there_is_no_more(
    server: LiveAsgiServer, ada: Caller
) -> None:
    game = ada.create_game(opponents=1, level="easy", target_score=None, seed="ef" * 32)
    stream = _open(server, game["id"], token=ada.token)
    try:
        stream.events_until(_event_seq(game["id"]))
        final = play_to_the_end(ada, game)
        assert final["status"] == "finished"
        rest = _events(stream.rest())
    finally:
        stream.close()
    assert rest[-1].event == "game_over" and rest[-1].id == _event_seq(game["id"])
    again = _open(server, game["id"], token=ada.token, headers={"Last-Event-ID": str(rest[-1].id)})
    assert again.status == 204
    again.close()
    # From an earlier event, the rest is sent, and the stream ends again.
    earlier = _open(server, game["id"], token=ada.token, headers={"Last-Event-ID": str(rest[-2].id)})
    try:
        assert [message.event for message in _events(earlier.rest())] == ["game_over"]
    finally:
        earlier.close()


def _assert_a_move_reaches_the_stream(server: LiveAsgiServer, caller: Caller) -> None:
    game = caller.create_game(opponents=1)
    stream = _open(
        server, game["id"], token=caller.token, headers={"Last-Event-ID": str(_event_seq(game["id"]))}
    )
    try:
        assert stream.next().retry == 3000
        caller.moves(game, [{"type": "end_turn"}])
        assert stream.next(timeout=30).event == "end_turn"
    finally:
        stream.close()


def test_streams_are_woken_within_the_process_without_redis(server: LiveAsgiServer, ada: Caller) -> None:
    with override_settings(REDIS_URL="", STREAM_HEARTBEAT_SECONDS=600):
        _assert_a_move_reaches_the_stream(server, ada)


def test_streams_poll_the_log_while_redis_does_not_answer(server: LiveAsgiServer, ada: Caller) -> None:
    # Nothing listens there: wake-ups cannot be published or heard, and the stream reads the log every
    # second instead of waiting for the heartbeat.
    with override_settings(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0", STREAM_HEARTBEAT_SECONDS=600):
        _assert_a_move_reaches_the_stream(server, ada)


def test_wake_ups_are_published_on_redis_in_order_without_a_reply_to_wait_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The publisher writes each PUBLISH to a connection on which Redis sends no replies (CLIENT REPLY OFF),
    so that a write's wake-up costs no round trip; every wake-up still arrives, in order."""
    needs_redis()
    # As in a process that serves no ASGI server (gunicorn's, a worker's): this module's live server would
    # otherwise take the commands of this thread over its event loop's connection.
    monkeypatch.setattr(notifications, "command_loop", lambda: None)
    listener: Any = redis.Redis.from_url(settings.REDIS_URL).pubsub()  # type: ignore[no-untyped-call]
    listener.subscribe(notifications.channel("wake-up-order"))
    assert listener.get_message(timeout=2) is not None  # the subscription's confirmation
    try:
        for seq in range(1, 51):
            notifications.publish("wake-up-order", seq)
        received: list[int] = []
        while len(received) < 50 and (message := listener.get_message(timeout=2)) is not None:
            received.append(int(message["data"]))
        assert received == list(range(1, 51))
        connection = notifications._publisher(settings.REDIS_URL)._connection
        assert connection is not None and not connection.can_read(timeout=0.2)
    finally:
        listener.close()


# Without the window in which a finished game's stream waits for its rematch (test_person_stream.py).
@override_settings(REMATCH_STREAM_SECONDS=0)
def test_every_seat_of_a_table_streams_the_whole_game_seeing_only_its_own_cards(
    server: LiveAsgiServer, transactional_db: None
) -> None:
    table = seat_table([PERSON, PERSON, computer("sharp"), PERSON], target_score=30, seed="7a" * 32)
    streams = {
        seat: _open(server, table.id, ticket=_ticket(person, table.id)["ticket"])
        for seat, person in table.people.items()
    }
    try:
        play_table(table, dealer=0)
        received = {seat: _events(stream.rest()) for seat, stream in streams.items()}
    finally:
        for stream in streams.values():
            stream.close()
    assert sorted(received) == [0, 1, 3]
    for seat, events in received.items():
        log = _log(table.people[seat], table.id)
        assert [message.data for message in events] == log
        assert events[-1].event == "game_over"
        _assert_seat_sees_only_its_own(events, seat)
        check_events([message.data for message in events], seat)
        assert any(m.event == "draw" and m.data["seat"] != seat for m in events)


def test_a_person_who_leaves_sees_nothing_more_of_the_seat(
    server: LiveAsgiServer, transactional_db: None
) -> None:
    table = seat_table([PERSON, PERSON], seed="3c" * 32)
    leaver = table.people[1]
    stream = _open(server, table.id, token=leaver.token)
    try:
        stream.events_until(_event_seq(table.id))
        assert leaver.post(f"/api/v1/games/{table.id}/leave").status_code in (200, 204)
        del table.people[1]
        play_table(table, dealer=0)
        assert _events(stream.rest()) == []
    finally:
        stream.close()
    refused = _open(server, table.id, token=leaver.token)
    assert (refused.status, refused.body()["code"]) == (404, "game_not_found")


# --- tickets ------------------------------------------------------------------------------------------------


def test_a_ticket_opens_its_game_until_it_expires(
    server: LiveAsgiServer, ada: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = ada.create_game(opponents=1)
    ticket = _ticket(ada, game["id"])
    expires = datetime.fromisoformat(ticket["expires_at"]).timestamp()
    assert ticket["url"] == f"http://testserver/api/v1/games/{game['id']}/stream?ticket={ticket['ticket']}"
    assert ada.token not in ticket["url"]
    # Twice, as EventSource reconnects with the same URL.
    for _ in range(2):
        opened = _open(server, game["id"], ticket=ticket["ticket"])
        assert opened.status == 200
        opened.close()
    monkeypatch.setattr(streams, "ticket_clock", lambda: expires)
    expired = _open(server, game["id"], ticket=ticket["ticket"])
    assert expired.status == 401 and expired.headers["content-type"] == PROBLEM
    assert expired.headers["www-authenticate"] == 'Bearer realm="api"'
    assert expired.body()["code"] == "invalid_ticket"


@pytest.mark.parametrize("forgery", ["signature", "payload", "garbage"])
def test_a_forged_ticket_is_refused(server: LiveAsgiServer, ada: Caller, forgery: str) -> None:
    game = ada.create_game(opponents=1)
    ticket = _ticket(ada, game["id"])["ticket"]
    payload, _, signature = ticket.rpartition(":")
    forged = {
        "signature": f"{payload}:{signature[:-2]}AA",
        "payload": f"{payload[:-4]}AAAA:{signature}",
        "garbage": "not-a-ticket",
    }[forgery]
    refused = _open(server, game["id"], ticket=forged)
    assert (refused.status, refused.body()["code"]) == (401, "invalid_ticket")


@pytest.mark.parametrize("authorization", ["Bearer kc_not-a-token", "Bearer", "Bearer two words"])
def test_a_bad_authorization_header_beside_a_good_ticket_is_refused_as_everywhere(
    server: LiveAsgiServer, ada: Caller, authorization: str
) -> None:
    game = ada.create_game(opponents=1)
    ticket = _ticket(ada, game["id"])["ticket"]
    refused = _open(server, game["id"], ticket=ticket, headers={"Authorization": authorization})
    assert (refused.status, refused.body()["code"]) == (401, "invalid_token")


def test_a_ticket_opens_only_its_own_game_and_dies_with_its_token(
    server: LiveAsgiServer, ada: Caller
) -> None:
    first = ada.create_game(opponents=1)
    second = ada.create_game(opponents=1)
    ticket = _ticket(ada, first["id"])["ticket"]
    elsewhere = _open(server, second["id"], ticket=ticket)
    assert (elsewhere.status, elsewhere.body()["code"]) == (401, "invalid_ticket")
    assert ada.post("/api/v1/players/me/token").status_code == 200
    revoked = _open(server, first["id"], ticket=ticket)
    assert (revoked.status, revoked.body()["code"]) == (401, "invalid_ticket")


def test_a_stream_or_ticket_of_someone_elses_game_is_not_found(server: LiveAsgiServer, ada: Caller) -> None:
    game = ada.create_game(opponents=1)
    eve = new_caller("Eve")
    assert_problem(eve.post(f"/api/v1/games/{game['id']}/stream-tickets"), 404, "game_not_found")
    refused = _open(server, game["id"], token=eve.token)
    assert (refused.status, refused.body()["code"]) == (404, "game_not_found")
    anonymous = _open(server, game["id"])
    assert (anonymous.status, anonymous.body()["code"]) == (401, "not_authenticated")


@pytest.mark.parametrize("last_event_id", ["-1", "x", "1.5"])
def test_a_last_event_id_that_is_not_a_seq_is_refused(
    server: LiveAsgiServer, ada: Caller, last_event_id: str
) -> None:
    game = ada.create_game(opponents=1)
    by_header = _open(server, game["id"], token=ada.token, headers={"Last-Event-ID": last_event_id})
    assert (by_header.status, by_header.body()["code"]) == (400, "invalid_request")
    by_query = _open(server, game["id"], token=ada.token, query=f"last_event_id={last_event_id}")
    assert (by_query.status, by_query.body()["code"]) == (400, "invalid_request")


# --- under WSGI ---------------------------------------------------------------------------------------------


def test_under_wsgi_a_stream_sends_what_there_is_and_ends(ada: Caller) -> None:
    game = ada.create_game(opponents=1)
    response = ada.client.get(f"/api/v1/games/{game['id']}/stream", HTTP_LAST_EVENT_ID="1")
    assert isinstance(response, StreamingHttpResponse)
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    body = b"".join(response).decode()
    assert body.startswith("retry: 3000\n\n")
    ids = [int(line.removeprefix("id: ")) for line in body.splitlines() if line.startswith("id: ")]
    assert ids == list(range(2, _event_seq(game["id"]) + 1))


def test_opening_streams_is_rate_limited(server: LiveAsgiServer, ada: Caller) -> None:
    game = ada.create_game(opponents=1)
    rates = {"anon": "0/min", "user": "0/min"}
    with override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}):
        refused = _open(server, game["id"], token=ada.token)
        assert (refused.status, refused.body()["code"]) == (429, "rate_limited")
        assert int(refused.headers["retry-after"]) >= 1


def test_a_tokens_stream_opens_are_counted_in_its_window_until_it_is_full(
    server: LiveAsgiServer, ada: Caller
) -> None:
    game = ada.create_game(opponents=1)
    # The window the requests before opened is closed, so that the opens are its only counts.
    caches["default"].delete(f"ratelimit:user:{hashlib.sha256(ada.token.encode()).hexdigest()}")
    rates = {"anon": "1000/min", "user": "2/min"}
    with override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}):
        opened = [_open(server, game["id"], token=ada.token) for _ in range(2)]
        refused = _open(server, game["id"], token=ada.token)
        for stream in opened:
            assert stream.status == 200
            stream.close()
        assert (refused.status, refused.body()["code"]) == (429, "rate_limited")
        assert int(refused.headers["retry-after"]) >= 1


def test_a_stream_opens_rate_limit_count_holds_no_reader_thread_waiting_for_the_loop(
    server: LiveAsgiServer, ada: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A reader thread that waited for the event loop to send its count (as the opens' checks did) is held
    # for as long as the loop is busy with other opens: under a burst every reader waited so, behind it.
    needs_redis()
    game = ada.create_game(opponents=1)
    waited: list[str] = []
    answer = cache_module._loop_result

    def recorded(future: Any, timeout: float) -> Any:
        waited.append(threading.current_thread().name)
        return answer(future, timeout)

    monkeypatch.setattr(cache_module, "_loop_result", recorded)
    for ticket in (None, _ticket(ada, game["id"])["ticket"]):
        stream = _open(server, game["id"], token=None if ticket else ada.token, ticket=ticket)
        assert stream.status == 200
        assert stream.next().retry is not None
        stream.close()
    assert not [name for name in waited if name.startswith("stream-read")]


def test_a_streams_request_signals_are_sent_on_the_servers_loop(server: LiveAsgiServer, ada: Caller) -> None:
    # Through sync_to_async they ran on the one thread asgiref keeps for thread-sensitive work, where every
    # stream open of the process waited its turn.
    from django.core import signals

    game = ada.create_game(opponents=1)
    threads: dict[str, list[str]] = {"started": [], "finished": []}

    def started(scope: Any = None, **_: Any) -> None:
        if scope is not None and scope.get("path", "").endswith("/stream"):
            threads["started"].append(threading.current_thread().name)

    def finished(**_: Any) -> None:
        threads["finished"].append(threading.current_thread().name)

    signals.request_started.connect(started)
    signals.request_finished.connect(finished)
    try:
        stream = _open(server, game["id"], token=ada.token)
        assert stream.status == 200
        stream.close()
        deadline = time.monotonic() + 30
        while server.thread.name not in threads["finished"] and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        signals.request_started.disconnect(started)
        signals.request_finished.disconnect(finished)
    assert threads["started"] == [server.thread.name]
    assert server.thread.name in threads["finished"]
