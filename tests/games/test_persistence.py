"""The move path's persistence (games.persistence): both write paths give the same rows, one read and one
write per move on PostgreSQL, and a race at one version has exactly one winner, with or without a version."""

import json
import threading
import uuid
from collections.abc import Callable
from datetime import UTC
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from games import persistence
from games.models import (
    Game,
    GameEvent,
    GameHand,
    GameMove,
    IdempotentRequest,
    PersonEvent,
    PersonFeed,
    Player,
)
from tests.support.games import SEED, Caller, new_caller, play_to_the_end, whole_turn
from tests.support.problems import assert_problem
from tests.support.races import race, split

RACERS = 8


def _play_move_by_move(caller: Caller, view: dict[str, Any]) -> dict[str, Any]:
    """Plays the game to its end through the API, each play of a turn a request of its own (so in-turn writes,
    committed asynchronously on PostgreSQL, are among them), then the end_turn, and deals each next hand."""
    for _ in range(2000):
        if view["status"] == "finished":
            return view
        if view["status"] == "hand_over":
            response = caller.post(f"/api/v1/games/{view['id']}/hands", {"expected_version": view["version"]})
        else:
            *plays, end = whole_turn(view)
            for move in plays:
                response = caller.moves(view, [move])
                assert response.status_code == 200, response.content
                view = response.json()
            response = caller.moves(view, [end])
        assert response.status_code == 200, response.content
        view = response.json()
    raise AssertionError("the game did not end")


def _rows(game_id: str) -> dict[str, Any]:
    """Everything a game's writes stored, without what differs between two games (ids, creation times):
    the game row, and the move, event and hand rows, each with whether it was stamped at the game's last
    write or an earlier one."""
    game = Game.objects.get(id=game_id)
    row = {
        field.attname: getattr(game, field.attname)
        for field in Game._meta.concrete_fields
        # `seating` names the player's id too.
        if field.attname not in {"id", "player_id", "seating", "created_at", "updated_at", "finished_at"}
    }
    row["finished"] = game.finished_at is not None

    def rows(model: type[GameMove | GameEvent | GameHand], order: str) -> list[dict[str, Any]]:
        stored = []
        for values in model.objects.filter(game=game).order_by(order).values():
            kept: dict[str, Any] = {
                name: value for name, value in values.items() if name not in {"id", "game_id", "created_at"}
            }
            kept["last_write"] = values["created_at"] == game.updated_at
            stored.append(kept)
        return stored

    # The person stream's events of the game's player (their `game` is the game's id).
    person = [
        (seq, kind, {name: value for name, value in data.items() if name != "game"})
        for seq, kind, data in PersonEvent.objects.filter(player_id=game.player_id)
        .order_by("seq")
        .values_list("seq", "type", "data")
    ]
    return {
        "game": row,
        "moves": rows(GameMove, "seq"),
        "events": rows(GameEvent, "seq"),
        "hands": rows(GameHand, "hand_number"),
        "person": person,
    }


def _whole_game(monkeypatch: pytest.MonkeyPatch, *, one_statement: bool) -> dict[str, Any]:
    monkeypatch.setattr(persistence, "one_statement", lambda: one_statement)
    caller = new_caller()
    view = caller.create_game(target_score=8, seed="34" * 32, opponents=2)
    view = _play_move_by_move(caller, view)
    assert view["status"] == "finished"
    return _rows(view["id"])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_one_statement_and_the_portable_write_store_the_same_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one_statement = _whole_game(monkeypatch, one_statement=True)
    portable = _whole_game(monkeypatch, one_statement=False)
    assert one_statement == portable
    # The game was played through several hands, turns and in-turn plays, and the last write stamped the
    # game row and its own log rows alike.
    assert len(one_statement["hands"]) >= 2 and one_statement["game"]["version"] > 20
    assert {stored["last_write"] for stored in one_statement["moves"]} == {True, False}
    # Each of the player's turns told them once, in order, on both paths.
    assert [seq for seq, _, _ in one_statement["person"]] == list(range(1, len(one_statement["person"]) + 1))
    assert {kind for _, kind, _ in one_statement["person"]} == {"your_turn", "game_over"}


@pytest.mark.django_db
def test_a_lost_write_appends_nothing() -> None:
    """The write checks the version it read: against any other it changes nothing, on either path."""
    caller = new_caller()
    view = caller.create_game(seed=SEED)
    game = Game.objects.get(id=view["id"])
    counts = (GameMove.objects.count(), GameEvent.objects.count())
    move = GameMove(
        game=game, seq=game.move_seq + 1, hand_number=1, seat=0, move={"type": "end_turn"}, version=2
    )
    event = GameEvent(game=game, seq=game.event_seq + 1, version=2, type="turn_ended", data={})
    game.version = 2
    person = persistence.PersonAppends(
        feeds=[{"player_id": caller.player_id, "count": 1}],
        events=[{"player_id": caller.player_id, "back": 0, "type": "your_turn", "data": {}}],
    )
    rows = persistence.Rows(moves=[move], events=[event], hands=[], person=person)
    told = PersonEvent.objects.count()
    assert persistence.game_save(game, rows, read_version=view["version"] + 1) is False
    assert (GameMove.objects.count(), GameEvent.objects.count()) == counts
    assert PersonEvent.objects.count() == told
    assert Game.objects.get(id=view["id"]).version == view["version"]


# --- round trips --------------------------------------------------------------------------------------------


def _statements(send: Callable[[], Any]) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        response = send()
    assert response.status_code == 200, response.content
    return [query["sql"].split(None, 1)[0].upper() for query in queries.captured_queries]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_move_on_postgresql_is_one_read_and_one_write_outside_any_transaction() -> None:
    """The design, pinned: one SELECT authenticates and loads the game, one statement writes it with both
    logs (and, for an in-turn play, sets asynchronous commit for itself). Neither opens a transaction: the
    write is one statement, atomic on its own, so there is no BEGIN or COMMIT either."""
    caller = new_caller()
    view = caller.create_game(seed=SEED)
    path = f"/api/v1/games/{view['id']}"

    def play(**extra: Any) -> Callable[[], Any]:
        """The next play of the player's turn, ready to send."""
        current = caller.get(path).json()
        move, *_ = whole_turn(current)
        assert move["type"] == "play"
        return lambda: caller.moves(current, [move], **extra)

    assert _statements(play()) == ["SELECT", "WITH"]
    view = caller.get(path).json()
    assert _statements(lambda: caller.moves(view, [{"type": "end_turn"}])) == ["SELECT", "WITH"]
    # An Idempotency-Key adds its stored response, in the write's transaction.
    keyed = ["SELECT", "BEGIN", "WITH", "INSERT", "COMMIT"]
    assert _statements(play(HTTP_IDEMPOTENCY_KEY="k1")) == keyed


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_move_path_prepares_one_read_and_one_write_whatever_the_rows_it_writes() -> None:
    """On a fresh connection, plays and turn ends (each writing a different number of log rows, from one move
    to the computer players' whole turns) run as prepared statements of the connection: one read, and one
    write for each way of committing (asynchronously, or waiting for the flush when the hand ends) and each
    set of logs it appends to (a play's moves and events; a hand's end adds its hand row and person events),
    whose text does not vary with the number of rows."""
    connection.close()
    caller = new_caller()
    view = caller.create_game(seed=SEED, opponents=3)
    rows_written = set()
    for _ in range(3):
        for move in whole_turn(view):
            if view["status"] != "playing":
                break
            before = GameEvent.objects.filter(game_id=view["id"]).count()
            response = caller.moves(view, [move])
            assert response.status_code == 200, response.content
            view = response.json()
            rows_written.add(GameEvent.objects.filter(game_id=view["id"]).count() - before)
    assert len(rows_written) > 2
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
        prepared = [statement for (statement,) in cursor.fetchall()]
    game_table = Game._meta.db_table
    writes = [text for text in prepared if text.startswith(f'WITH updated AS (UPDATE "{game_table}"')]
    reads = [text for text in prepared if f'LEFT JOIN "{game_table}"' in text]
    assert len(reads) == 1 and "$1" in reads[0], prepared
    kinds = [
        tuple(f"{name} AS (INSERT" in text for name in ("moves", "events", "hands", "person"))
        + ("synchronous_commit" in text,)
        for text in writes
    ]
    assert writes and len(set(kinds)) == len(kinds), prepared
    # A play or a turn end within the hand: its moves and events, no hand row, committed asynchronously.
    assert (True, True, False, False, True) in kinds, prepared


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_request_outside_the_move_path_is_authenticated_by_one_prepared_statement() -> None:
    """GET players/me is one statement, the player by its token's hash, prepared on the connection: the
    authentication of every request that does not look its token up with its game."""
    connection.close()
    caller = new_caller()
    for _ in range(2):
        assert _statements(lambda: caller.get("/api/v1/players/me")) == ["SELECT"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
        prepared = [statement for (statement,) in cursor.fetchall()]
    player_table = Player._meta.db_table
    assert [text for text in prepared if text.startswith("SELECT") and f'FROM "{player_table}" WHERE' in text]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_game_read_is_the_move_path_s_one_statement() -> None:
    """GET a game authenticates and loads the game with its seats in the one read of the move path."""
    caller = new_caller()
    view = caller.create_game(seed=SEED)
    assert _statements(lambda: caller.get(f"/api/v1/games/{view['id']}")) == ["SELECT"]


@pytest.mark.django_db
def test_the_player_by_token_hash_is_the_player_the_orm_reads() -> None:
    caller = new_caller()
    stored = Player.objects.get(id=caller.player_id)
    player = persistence.player_by_token_hash(stored.token_hash)
    assert player is not None
    assert {field.attname: getattr(player, field.attname) for field in Player._meta.concrete_fields} == {
        field.attname: getattr(stored, field.attname) for field in Player._meta.concrete_fields
    }
    assert player._state.adding is False
    assert persistence.player_by_token_hash("0" * 64) is None
    # The same datetimes with the same tzinfo as the ORM's (on PostgreSQL, read by psycopg's own loader).
    for name in ("created_at", "token_rotated_at"):
        assert getattr(player, name).tzinfo is getattr(stored, name).tzinfo is UTC


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_move_path_reads_timestamps_with_psycopg_s_loader_only_where_both_loaders_agree() -> None:
    connection.ensure_connection()
    assert persistence._utc_throughout(connection)
    caller = new_caller()
    game = Game.objects.get(id=caller.create_game(seed=SEED, opponents=1)["id"])
    loaded = persistence.game_load(
        game_id=game.id, player=Player.objects.get(id=caller.player_id), idempotency_key=None
    )
    for name in ("created_at", "updated_at"):
        assert getattr(loaded.game, name) == getattr(game, name)
        assert getattr(loaded.game, name).tzinfo is getattr(game, name).tzinfo is UTC
    with connection.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'Europe/Paris'")
    try:
        # A session in another time zone: Django's loader reads in UTC whatever the session's, psycopg's
        # in the session's; the move path keeps Django's.
        assert not persistence._utc_throughout(connection)
        player = persistence.player_by_token_hash(Player.objects.get(id=caller.player_id).token_hash)
        assert player is not None
        assert player.created_at.tzinfo is UTC
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET TIME ZONE 'UTC'")


def _game_after_a_turn() -> Game:
    """A game of four whose person has played one whole turn, as stored."""
    caller = new_caller()
    view = caller.create_game(seed=SEED, opponents=3)
    response = caller.moves(view, whole_turn(view))
    assert response.status_code == 200, response.content
    return Game.objects.get(id=view["id"])


@pytest.mark.django_db
def test_the_events_after_a_version_and_the_seats_from_the_game_row_are_what_the_orm_reads() -> None:
    game = _game_after_a_turn()
    columns = ("seq", "version", "type", "data", "game_id", "created_at")
    for version, limit in [(0, 1000), (1, 1000), (2, 3), (game.version, 10)]:
        stored = game.events.filter(version__gt=version).order_by("seq")[:limit]
        read = persistence.game_events_after(game=game, version=version, limit=limit)
        assert [[getattr(event, name) for name in columns] for event in read] == [
            [getattr(event, name) for name in columns] for event in stored
        ]
    assert len(persistence.game_events_after(game=game, version=0, limit=1000)) > 3
    seats = persistence.game_seats(game)
    assert seats is not None
    assert [(row.seat, row.kind, row.level, row.name, row.player_id) for row in seats] == [
        (row.seat, row.kind, row.level, row.name, row.player_id) for row in game.seats.all()
    ]


@pytest.mark.django_db
def test_the_hand_s_events_are_those_the_orm_reads_from_the_last_deal_on() -> None:
    """What sharp reads of the hand so far (games.services.writes): the log's events from its last deal on,
    in order, whatever hands came before; none for a game whose log has no deal."""
    caller = new_caller()
    view = play_to_the_end(caller, caller.create_game(seed=SEED, level="sharp", target_score=30))
    game = Game.objects.get(id=view["id"])
    assert game.events.filter(type="deal").count() > 1
    last_deal = game.events.filter(type="deal").order_by("-seq").first()
    assert last_deal is not None
    stored = game.events.filter(seq__gte=last_deal.seq).order_by("seq")
    read = persistence.hand_events_stored(game)
    assert read == [(event.type, event.data) for event in stored]
    assert read[0][0] == "deal" and isinstance(read[0][1], dict)
    game.events.all().delete()
    assert persistence.hand_events_stored(game) == []


@pytest.mark.django_db
def test_a_log_row_is_the_instance_the_model_makes() -> None:
    """persistence.log_row, which a write's log uses for its rows, makes what Model.__init__ makes: the same
    attributes, the game cached as the relation, unsaved; and it is saved as one."""
    caller = new_caller()
    game = Game.objects.get(id=caller.create_game(seed=SEED)["id"])
    rows: list[tuple[type[GameEvent] | type[GameMove] | type[GameHand], dict[str, Any]]] = [
        (GameEvent, {"seq": 90, "version": 9, "type": "play", "data": {"card": "AS"}}),
        (GameMove, {"seq": 90, "hand_number": 1, "seat": 0, "move": {"type": "end_turn"}, "version": 9}),
        (GameHand, {"hand_number": 7, "result": {"scores": [1, 2]}}),
        (GameEvent, {"seq": 91, "version": 9, "data": {}}),
    ]
    for model, values in rows:
        made, expected = persistence.log_row(model, game, **values), model(game=game, **values)
        assert type(made) is model
        assert {k: v for k, v in vars(made).items() if k != "_state"} == {
            k: v for k, v in vars(expected).items() if k != "_state"
        }
        assert made.game is game and made._state.adding and made._state.db is None
        assert made._state.fields_cache == expected._state.fields_cache
        made.save()
        stored = model._default_manager.get(pk=made.pk)
        assert stored.game_id == game.pk and stored.created_at is not None
        assert all(getattr(stored, name) == value for name, value in values.items())


@pytest.mark.django_db
def test_a_streams_log_read_is_the_game_and_the_events_the_orm_reads_in_one_statement() -> None:
    game = _game_after_a_turn()
    columns = ("seq", "version", "type", "data", "game_id", "created_at")
    for after, limit in [(0, 1000), (1, 1000), (2, 3), (game.event_seq - 1, 10), (game.event_seq, 10)]:
        stored = game.events.filter(seq__gt=after).order_by("seq")[:limit]
        with CaptureQueriesContext(connection) as queries:
            read = persistence.game_log_after(game_id=game.id, after=after, limit=limit)
        assert read is not None
        if connection.vendor == "postgresql":
            assert len(queries) == 1
        row, events = read
        assert {field.attname: getattr(row, field.attname) for field in Game._meta.concrete_fields} == {
            field.attname: getattr(game, field.attname) for field in Game._meta.concrete_fields
        }
        assert [[getattr(event, name) for name in columns] for event in events] == [
            [getattr(event, name) for name in columns] for event in stored
        ]
    assert persistence.game_log_after(game_id=uuid.uuid4(), after=0, limit=10) is None


@pytest.mark.django_db
def test_a_person_streams_feed_read_is_the_feed_and_the_events_the_orm_reads_in_one_statement() -> None:
    player = Player.objects.get(id=new_caller().player_id)
    PersonFeed.objects.update_or_create(player=player, defaults={"seq": 5, "broadcast_mark": 0})
    for seq in range(1, 7):
        # The sixth is past the feed's seq: not committed with it yet, as far as a reader may know.
        PersonEvent.objects.create(player=player, seq=seq, type="game_over", data={"game": str(uuid.uuid4())})
    columns = ("player_id", "seq", "type", "data", "created_at")
    for after, limit in [(0, 200), (2, 200), (1, 2), (5, 10), (9, 10)]:
        with CaptureQueriesContext(connection) as queries:
            read = persistence.person_feed_after(player_id=player.id, after=after, limit=limit)
        assert read is not None
        if connection.vendor == "postgresql":
            assert len(queries) == 1
        stored = PersonEvent.objects.filter(player=player, seq__gt=after, seq__lte=5).order_by("seq")[:limit]
        assert (read.newest_broadcast, read.seq, read.broadcast_mark) == (0, 5, 0)
        assert [[getattr(event, name) for name in columns] for event in read.events] == [
            [getattr(event, name) for name in columns] for event in stored
        ]
    nobody = Player.objects.get(id=new_caller().player_id)
    PersonFeed.objects.filter(player=nobody).delete()
    assert persistence.person_feed_after(player_id=nobody.id, after=0, limit=10) is None


# --- races --------------------------------------------------------------------------------------------------


@pytest.fixture
def all_read_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every racer's write waits until all of them have read the game and computed their change: they all
    read one version, so the race is at that version whether or not the requests name it."""
    barrier = threading.Barrier(RACERS, timeout=60)
    save = persistence.game_save

    def save_after_all_read(*args: Any, **kwargs: Any) -> bool:
        barrier.wait()
        return save(*args, **kwargs)

    monkeypatch.setattr(persistence, "game_save", save_after_all_read)


def _race(token: str, send: Callable[[APIClient], Any], racers: int = RACERS) -> list[Any]:
    def racer() -> Any:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return send(client)

    responses, errors = split(race(racers, racer))
    assert errors == []
    return responses


def _one_winner(responses: list[Any], game_id: str) -> Any:
    """The one 200 among the responses; every other is a 409 version_conflict naming the game as the winner
    left it."""
    assert sorted(response.status_code for response in responses) == [200] + [409] * (len(responses) - 1)
    [winner] = [response for response in responses if response.status_code == 200]
    version = winner.json()["version"]
    for response in responses:
        if response.status_code == 409:
            assert_problem(response, 409, "version_conflict")
            assert response.json()["current"]["version"] == version
            assert response["ETag"] == f'"{version}"'
    assert Game.objects.get(id=game_id).version == version
    return winner


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("versioned", [True, False], ids=["expected_version", "no_version"])
@pytest.mark.usefixtures("all_read_first")
def test_moves_raced_at_one_version_have_exactly_one_winner(versioned: bool) -> None:
    caller = new_caller()
    view = caller.create_game(seed=SEED)
    body: dict[str, Any] = {"moves": [{"type": "end_turn"}]}
    if versioned:
        body["expected_version"] = view["version"]
    responses = _race(
        caller.token, lambda client: client.post(f"/api/v1/games/{view['id']}/moves", body, format="json")
    )
    _one_winner(responses, view["id"])
    assert GameMove.objects.filter(game_id=view["id"], seat=0).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("all_read_first")
def test_in_turn_plays_raced_have_exactly_one_winner() -> None:
    """Asynchronously committed writes race as the others do."""
    caller = new_caller()
    view = caller.create_game(seed=SEED)
    play, *_ = whole_turn(view)
    responses = _race(
        caller.token,
        lambda client: client.post(f"/api/v1/games/{view['id']}/moves", {"moves": [play]}, format="json"),
    )
    _one_winner(responses, view["id"])
    assert GameMove.objects.filter(game_id=view["id"], seat=0).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("all_read_first")
def test_a_retry_that_lost_the_race_to_its_first_attempt_answers_with_the_first_response() -> None:
    """Retries with one Idempotency-Key, all of which read the game before any was stored: the one that
    wins stores its response, and every one that lost the race to it answers with that response."""
    caller = new_caller()
    view = caller.create_game(seed=SEED)
    path = f"/api/v1/games/{view['id']}/moves"
    body = {"moves": [{"type": "end_turn"}], "expected_version": view["version"]}
    responses = _race(
        caller.token, lambda client: client.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY="once")
    )
    assert {response.status_code for response in responses} == {200}
    first = [json.loads(response.content) for response in responses]
    assert all(body == first[0] for body in first)
    assert sum(response.get("Idempotent-Replayed") == "true" for response in responses) == RACERS - 1
    assert Game.objects.get(id=view["id"]).version == view["version"] + 1
    assert IdempotentRequest.objects.filter(key="once").count() == 1


# --- authentication with the load ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_one_read_refuses_a_bad_token_before_anything_else() -> None:
    caller = new_caller()
    view = caller.create_game(seed=SEED)
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION="Bearer kc_nobody")
    missing = "/api/v1/games/00000000-0000-4000-8000-000000000000"
    for path, body in (
        (f"/api/v1/games/{view['id']}/moves", {"moves": [{"type": "end_turn"}]}),
        (f"{missing}/moves", {"moves": [{"type": "end_turn"}]}),
        (f"/api/v1/games/{view['id']}/moves", {"moves": [{"type": "fly"}]}),
        (f"/api/v1/games/{view['id']}/moves", {"moves": []}),
        (f"/api/v1/games/{view['id']}/hands", {"expected_version": "x"}),
        (f"{missing}/hands", {}),
    ):
        assert_problem(stranger.post(path, body, format="json"), 401, "invalid_token")
    assert_problem(caller.post(f"{missing}/moves", {"moves": [{"type": "end_turn"}]}), 404, "game_not_found")
    other = new_caller("Bo")
    assert_problem(other.moves(view, [{"type": "end_turn"}]), 404, "game_not_found")
    assert Game.objects.get(id=view["id"]).version == view["version"]
