"""The SQL of the move path, written out: one read that authenticates the request and loads its game, and one
optimistic write that saves the game at its next version with its logs; and the read that authenticates every
other request (`player_by_token_hash`: the player by its token's hash, one prepared statement), and the events
a game view shows since a version (`game_events_after`).

- `game_load` is one SELECT: the player whose token hash the request carries (or the player already known),
  LEFT JOINed to the player's seat at the game with the id asked for, to that game (whose row holds all its
  seats, `seating`) and to the stored response of the request's Idempotency-Key. No row is an invalid token
  (401), a row without a game is game_not_found (404: no seat there), so a bad token is a 401 for any game.
  Nothing is locked: the write checks the version.
- `game_save` writes the game row only if it is still at the version read (`WHERE id = … AND version = …`).
  On PostgreSQL the appends to the move log, the event log and the hand rows are data-modifying CTEs of the
  same statement that select FROM the update's RETURNING: when the update finds no row (another request
  won), none of them inserts a row. On SQLite (the default local run) the same rows are written by an UPDATE
  whose row count decides, then one INSERT per table. Every row of a write carries the same timestamp.

On PostgreSQL both statements are prepared on each connection (`_cursor`: server-side binding,
`prepare=True`; their text does not vary with the number of rows), so that each request binds and executes
them without their parse and plan (settings: DATABASE_PREPARED_STATEMENTS).

The rows are built here from the models' own field conversions (`get_db_prep_value`) and read back the same
way, so that both paths write what the ORM would."""

import functools
import json
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
import psycopg
from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models.base import ModelState
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from psycopg.types.datetime import TimestamptzLoader
from psycopg.types.numeric import Int8

from games.errors import GameNotFound, InvalidToken
from games.models import (
    Game,
    GameEvent,
    GameHand,
    GameMove,
    GameSeat,
    IdempotentRequest,
    PersonBroadcast,
    PersonEvent,
    PersonFeed,
    Player,
)
from games.shapes import GameView
from games.tokens import TokenHash

# The columns a write changes on the game row, in the order of the UPDATE's SET.
GAME_CHANGING_FIELDS = (
    "state",
    "turn_started_at",
    "turn_deadline",
    "version",
    "status",
    "hand_number",
    "move_seq",
    "event_seq",
    "finished_at",
    "updated_at",
)


def quoted(name: str) -> str:
    """A table's or column's name as the database's SQL writes it."""
    return connection.ops.quote_name(name)


def concrete_fields(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    return list(model._meta.concrete_fields)


def _field(model: type[models.Model], name: str) -> models.Field[Any, Any]:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field)
    return field


def value_from_column(field: models.Field[Any, Any], value: Any) -> Any:
    """A column's value as the model holds it: what the ORM's converters give, for the field types read
    here (PostgreSQL's jsonb and SQLite's JSON both come back as text, SQLite's UUIDs as hex, its
    timestamps naive UTC)."""
    if value is None:
        return None
    if isinstance(field, models.ForeignKey):
        return value_from_column(field.target_field, value)
    if isinstance(field, models.JSONField):
        return _json_loads(value) if isinstance(value, str | bytes) else value
    if isinstance(field, models.DateTimeField):
        if isinstance(value, str):
            value = parse_datetime(value)
        if isinstance(value, datetime) and timezone.is_naive(value):
            value = value.replace(tzinfo=UTC)
        return value
    if isinstance(field, models.UUIDField) and not isinstance(value, uuid.UUID):
        return uuid.UUID(str(value))
    return value


def _plain(field: models.Field[Any, Any]) -> models.Field[Any, Any] | None:
    """The field whose conversion value_from_column applies to the column's values, None for a field whose
    values are taken as they come (value_from_column leaves them alone)."""
    if isinstance(field, models.ForeignKey):
        return _plain(field.target_field)
    converted = (models.JSONField, models.DateTimeField, models.UUIDField)
    return field if isinstance(field, converted) else None


@functools.cache
def _reader(
    model: type[models.Model], fields: tuple[models.Field[Any, Any], ...]
) -> tuple[list[str], list[models.Field[Any, Any] | None]]:
    return [field.attname for field in fields], [_plain(field) for field in fields]


def instance_from_row(
    model: type[models.Model], fields: Sequence[models.Field[Any, Any]], row: Sequence[Any]
) -> Any:
    """The model instance of a row of `fields`' columns, each value as value_from_column gives it."""
    names, conversions = _reader(model, tuple(fields))
    values = [
        value if value is None or field is None else value_from_column(field, value)
        for field, value in zip(conversions, row, strict=True)
    ]
    return model.from_db(DEFAULT_DB_ALIAS, names, values)


@contextmanager
def _cursor() -> Iterator[CursorWrapper]:
    """A cursor for the move path's statements. On PostgreSQL it binds its parameters on the server and has
    each statement prepared on the connection the first time it runs there (`_Prepared`), so that the read and
    the write are parsed and planned once per connection rather than once per request; it is still Django's
    cursor wrapper around it (database errors translated, the query logged when queries are). Elsewhere it is
    Django's own cursor."""
    # The thread's connection itself rather than `connection`, which finds it again at each use (every
    # attribute the cursor wrapper reads on it, for each statement).
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql":
        with db.cursor() as cursor:
            yield cursor
        return
    db.close_if_health_check_failed()
    db.ensure_connection()
    raw = _Prepared(db.connection)
    if _utc_throughout(db):
        # psycopg's own loader (compiled, with psycopg's C module) in place of Django's, which wraps it in
        # Python to set the tzinfo that psycopg's already sets when both are UTC: the same datetimes, for a
        # tenth of the time each, on every row the move path and authentication read.
        raw.adapters.register_loader("timestamptz", TimestamptzLoader)
    wrapper = _LoggedCursor if db.queries_logged else CursorWrapper
    wrapped = wrapper(raw, db)
    db.validate_thread_sharing()
    with wrapped:
        yield wrapped


def _utc_throughout(db: Any) -> bool:
    """Whether Django reads this connection's timestamps as aware datetimes in UTC (USE_TZ, its database
    time zone UTC) and the session's TimeZone, which psycopg's own loader reads them in, is UTC too: then
    both loaders give the same datetime with the same tzinfo (datetime.timezone.utc)."""
    return db.timezone is UTC and db.connection.info.parameter_status("TimeZone") == "UTC"


def prepared_cursor() -> AbstractContextManager[CursorWrapper]:
    """_cursor, for the persistence modules of the apps built on games (daily.persistence): looked up at each
    call, so that what replaces it (a test's database outage) replaces it for them too."""
    return _cursor()


class _LoggedCursor(CursorDebugWrapper):
    """Django's logging cursor wrapper, logging each statement with its parameters in it, as Django does when
    it binds on the server (Django reads the text it logs from a client-side cursor's last query, which a
    server-binding cursor has not)."""

    def execute(self, sql: Any, params: Any = None) -> Any:
        logged = sql if params is None else psycopg.ClientCursor(self.cursor.connection).mogrify(sql, params)
        with self.debug_sql(logged):
            return CursorWrapper.execute(self, sql, params)


class _Prepared(psycopg.Cursor[Any]):
    """psycopg's cursor with server-side binding (Django's own cursor binds on the client, which cannot
    prepare), every statement prepared (`prepare=True`). psycopg keeps the prepared statements per connection
    (up to `prepared_max`, 100); it prepares nothing when the connection's `prepare_threshold` is None
    (settings: DATABASE_PREPARED_STATEMENTS=false), and then binds on the server without preparing. Integers
    are bound as bigint whatever their size, so that a statement's parameter types, and so its one prepared
    statement, do not change with the values."""

    def execute(
        self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None
    ) -> Any:
        if params is not None:
            params = [Int8(value) if type(value) is int else value for value in params]
        return super().execute(query, params, prepare=True, binary=binary)


def _db(model: type[models.Model], name: str, value: Any) -> Any:
    """`value` as the database takes it for the field `name` of `model`."""
    return _field(model, name).get_db_prep_value(value, connections[DEFAULT_DB_ALIAS], prepared=False)


@dataclass(frozen=True, slots=True)
class Stored:
    """The stored first response to an Idempotency-Key."""

    fingerprint: str
    response: GameView
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Loaded:
    """The request's player, the game, its seats in order, the player's seat there, and the stored response
    to the request's Idempotency-Key."""

    player: Player
    game: Game
    seats: list[GameSeat]
    seat: int
    stored: Stored | None


_PLAYER_FIELDS = concrete_fields(Player)
_GAME_FIELDS = concrete_fields(Game)
_STORED_FIELDS = [_field(IdempotentRequest, name) for name in ("fingerprint", "response", "created_at")]


def _seat_rows(game: Game, player: Player) -> list[GameSeat]:
    """The game's seats, from its row (Game.seating, kept with the GameSeat rows); a game made before tables
    has none there: its creator's, the one person who may read it, then the computers of `opponents`."""
    seats = game_seats(game)
    if seats is not None:
        return seats
    return [
        GameSeat(game=game, seat=0, kind=GameSeat.Kind.PERSON, name=player.display_name, player_id=player.pk),
        *(
            GameSeat(game=game, seat=seat, kind=GameSeat.Kind.COMPUTER, **opponent)
            for seat, opponent in enumerate(game.opponents, start=1)
        ),
    ]


_SEAT_COLUMNS = [field.attname for field in concrete_fields(GameSeat)]
_SEAT_PLAYER = _field(GameSeat, "player")
_SEAT_GAME = GameSeat._meta.get_field("game")


def game_seats(game: Game) -> list[GameSeat] | None:
    """The game's seats in order, from its row (Game.seating, kept with the GameSeat rows), with no query;
    None for a game made before tables, which has none there."""
    if game.seating is None:
        return None
    seats = []
    for seat, kind, level, name, who in game.seating:
        values = {
            "game_id": game.pk,
            "seat": seat,
            "kind": kind,
            "level": level,
            "name": name,
            "player_id": value_from_column(_SEAT_PLAYER, who),
        }
        # Positionally, every column given (Django's quicker way in, as from_db's), the game cached on it as
        # GameSeat(game=game) caches it.
        row = GameSeat(*[values.get(column) for column in _SEAT_COLUMNS])  # type: ignore[misc]
        _SEAT_GAME.set_cached_value(row, game)
        seats.append(row)
    return sorted(seats, key=lambda row: row.seat)


@functools.cache
def _load_sql(by_token: bool) -> str:
    # The statements are built once per process from the models' tables and columns (one database each).
    player, game, stored = (quoted(model._meta.db_table) for model in (Player, Game, IdempotentRequest))
    seat = quoted(GameSeat._meta.db_table)
    columns = ", ".join(
        [f"p.{quoted(field.column)}" for field in _PLAYER_FIELDS]
        + [f"g.{quoted(field.column)}" for field in _GAME_FIELDS]
        + [f"r.{quoted(field.column)}" for field in _STORED_FIELDS]
        + [f"s.{quoted('seat')}"]
    )
    return (
        f"SELECT {columns} FROM {player} p "
        f"LEFT JOIN {seat} s ON s.{quoted('player_id')} = p.{quoted('id')} AND s.{quoted('game_id')} = %s "
        f"LEFT JOIN {game} g ON g.{quoted('id')} = s.{quoted('game_id')} "
        f"LEFT JOIN {stored} r ON r.{quoted('player_id')} = p.{quoted('id')} AND r.{quoted('key')} = %s "
        f"WHERE p.{quoted('token_hash' if by_token else 'id')} = %s"
    )


def game_load(*, game_id: Any, player: Player | TokenHash, idempotency_key: str | None) -> Loaded:
    """The request's player, its game and the stored response to its Idempotency-Key, in one query. Raises
    InvalidToken when no player has the token, GameNotFound when the player has no such game."""
    by_token = isinstance(player, TokenHash)
    who = player.value if isinstance(player, TokenHash) else _db(Player, "id", player.pk)
    with _cursor() as cursor:
        cursor.execute(_load_sql(by_token), [_db(Game, "id", game_id), idempotency_key, who])
        row = cursor.fetchone()
    if row is None:
        raise InvalidToken()
    players = len(_PLAYER_FIELDS)
    games = players + len(_GAME_FIELDS)
    stores = games + len(_STORED_FIELDS)
    loaded_player: Player = instance_from_row(Player, _PLAYER_FIELDS, row[:players])
    if row[players] is None:
        raise GameNotFound(game_id)
    game: Game = instance_from_row(Game, _GAME_FIELDS, row[players:games])
    stored = None
    if row[games] is not None:
        fingerprint, response, created_at = (
            value_from_column(field, value)
            for field, value in zip(_STORED_FIELDS, row[games:stores], strict=True)
        )
        stored = Stored(fingerprint=fingerprint, response=response, created_at=created_at)
    seat, seats = row[stores], _seat_rows(game, loaded_player)
    return Loaded(player=loaded_player, game=game, seats=seats, seat=seat, stored=stored)


@functools.cache
def _player_sql() -> str:
    columns = ", ".join(quoted(field.column) for field in _PLAYER_FIELDS)
    return f"SELECT {columns} FROM {quoted(Player._meta.db_table)} WHERE {quoted('token_hash')} = %s"


def player_by_token_hash(token_hash: str) -> Player | None:
    """The player whose token has this hash, or None: the authentication of every request that does not look
    its token up with its game, in one statement (prepared on PostgreSQL, as game_load is)."""
    with _cursor() as cursor:
        cursor.execute(_player_sql(), [token_hash])
        row = cursor.fetchone()
    return None if row is None else instance_from_row(Player, _PLAYER_FIELDS, row)


_EVENT_FIELDS = concrete_fields(GameEvent)


@functools.cache
def _events_sql() -> str:
    columns = ", ".join(quoted(field.column) for field in _EVENT_FIELDS)
    return (
        f"SELECT {columns} FROM {quoted(GameEvent._meta.db_table)} "
        f"WHERE {quoted('game_id')} = %s AND {quoted('version')} > %s ORDER BY {quoted('seq')} LIMIT %s"
    )


def game_events_after(*, game: Game, version: int, limit: int) -> list[GameEvent]:
    """The game's events after `version`, in order, at most `limit` of them: one statement (prepared on
    PostgreSQL), for the game views that show what happened since a version."""
    with _cursor() as cursor:
        cursor.execute(_events_sql(), [_db(Game, "id", game.pk), version, limit])
        rows = cursor.fetchall()
    events: list[GameEvent] = [instance_from_row(GameEvent, _EVENT_FIELDS, row) for row in rows]
    return events


@functools.cache
def _hand_events_sql() -> str:
    table, seq, kind = quoted(GameEvent._meta.db_table), quoted("seq"), quoted("type")
    game, data = quoted(_field(GameEvent, "game").column), quoted("data")
    last_deal = f"SELECT {seq} FROM {table} WHERE {game} = %s AND {kind} = %s ORDER BY {seq} DESC LIMIT 1"
    return f"SELECT {kind}, {data} FROM {table} WHERE {game} = %s AND {seq} >= ({last_deal}) ORDER BY {seq}"


def hand_events_stored(game: Game) -> list[tuple[str, Any]]:
    """The type and data of each event the game's log holds from its last deal on, in order (none before a
    deal): one statement (prepared on PostgreSQL), for the computer players that read the hand so far."""
    game_id = _db(Game, "id", game.pk)
    data_field = _field(GameEvent, "data")
    with _cursor() as cursor:
        cursor.execute(_hand_events_sql(), [game_id, game_id, "deal"])
        rows = cursor.fetchall()
    return [(kind, value_from_column(data_field, data)) for kind, data in rows]


@functools.cache
def _log_row_defaults(
    model: type[models.Model],
) -> tuple[dict[str, Any], tuple[models.Field[Any, Any], ...]]:
    """The model's fields' defaults that are constants, and the fields whose default is made anew for each
    instance (a callable's)."""
    fields = model._meta.concrete_fields
    made = tuple(field for field in fields if field.has_default() and callable(field.default))
    return {field.attname: field.get_default() for field in fields if field not in made}, made


def log_row(model: type[models.Model], game: Game, **values: Any) -> Any:
    """`model(game=game, **values)` for a row of a game's logs (GameMove, GameEvent, GameHand) as a write
    makes them, a score of them at a turn's end against computer players: the instance Model.__init__ would
    make (every other field at its default, the game cached as its relation, not saved yet) in an eighth of
    its time. It sends no pre_init or post_init signal; nothing listens to them for these models."""
    instance = model.__new__(model)
    state = instance._state = ModelState()
    attributes = instance.__dict__
    constants, made = _log_row_defaults(model)
    attributes.update(constants)
    for field in made:
        attributes[field.attname] = field.get_default()
    attributes.update(values)
    attributes["game_id"] = game.pk
    state.fields_cache["game"] = game
    return instance


@functools.cache
def _stream_log_sql() -> str:
    game, event = quoted(Game._meta.db_table), quoted(GameEvent._meta.db_table)
    columns = ", ".join(
        [f"g.{quoted(field.column)}" for field in _GAME_FIELDS]
        + [f"e.{quoted(field.column)}" for field in _EVENT_FIELDS]
    )
    inner = ", ".join(quoted(field.column) for field in _EVENT_FIELDS)
    return (
        f"SELECT {columns} FROM {game} g LEFT JOIN LATERAL ("
        f"SELECT {inner} FROM {event} WHERE {quoted('game_id')} = g.{quoted('id')} "
        f"AND {quoted('seq')} > %s AND {quoted('seq')} <= g.{quoted('event_seq')} "
        f"ORDER BY {quoted('seq')} LIMIT %s) e ON TRUE WHERE g.{quoted('id')} = %s"
    )


def game_log_after(*, game_id: Any, after: int, limit: int) -> tuple[Game, list[GameEvent]] | None:
    """The game's row and its events after seq `after` up to its `event_seq` (at most `limit`, in order), or
    None for a game that is gone: what a stream reads whenever it is woken, beats or opens. On PostgreSQL one
    prepared statement, whose one snapshot shows every event up to the row's `event_seq` (committed with
    it); elsewhere the row, then its events."""
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        found = Game.objects.filter(id=game_id).first()
        if found is None:
            return None
        logged = GameEvent.objects.filter(game_id=game_id, seq__gt=after, seq__lte=found.event_seq)
        return found, list(logged.order_by("seq")[:limit])
    with _cursor() as cursor:
        cursor.execute(_stream_log_sql(), [after, limit, _db(Game, "id", game_id)])
        rows = cursor.fetchall()
    if not rows:
        return None
    games = len(_GAME_FIELDS)
    game: Game = instance_from_row(Game, _GAME_FIELDS, rows[0][:games])
    # A row without an event has every event column null (its id too).
    events: list[GameEvent] = [
        instance_from_row(GameEvent, _EVENT_FIELDS, row[games:]) for row in rows if row[games] is not None
    ]
    return game, events


@dataclass(frozen=True, slots=True)
class PersonFeedRead:
    """A player's feed as its stream reads it: the newest broadcast's seq (0: none), the feed's seq and
    broadcast mark, and its events after a seq (up to the feed's seq, in order)."""

    newest_broadcast: int
    seq: int
    broadcast_mark: int
    events: list[PersonEvent]


_PERSON_EVENT_FIELDS = concrete_fields(PersonEvent)


@functools.cache
def _person_feed_sql() -> str:
    feed, event = quoted(PersonFeed._meta.db_table), quoted(PersonEvent._meta.db_table)
    broadcast = quoted(PersonBroadcast._meta.db_table)
    columns = ", ".join(f"e.{quoted(field.column)}" for field in _PERSON_EVENT_FIELDS)
    inner = ", ".join(quoted(field.column) for field in _PERSON_EVENT_FIELDS)
    player = quoted("player_id")
    return (
        f"SELECT (SELECT max({quoted('seq')}) FROM {broadcast}), f.{quoted('seq')}, "
        f"f.{quoted('broadcast_mark')}, {columns} FROM {feed} f LEFT JOIN LATERAL ("
        f"SELECT {inner} FROM {event} WHERE {player} = f.{player} AND {quoted('seq')} > %s "
        f"AND {quoted('seq')} <= f.{quoted('seq')} ORDER BY {quoted('seq')} LIMIT %s) e ON TRUE "
        f"WHERE f.{player} = %s"
    )


def person_feed_after(*, player_id: Any, after: int, limit: int) -> PersonFeedRead | None:
    """The player's feed and its events after seq `after` (at most `limit`), or None when the player has
    no feed yet: what a person stream reads each time it is woken or beats. On PostgreSQL one prepared
    statement; elsewhere three."""
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        newest = PersonBroadcast.objects.aggregate(newest=models.Max("seq"))["newest"] or 0
        feed = PersonFeed.objects.filter(player_id=player_id).values_list("seq", "broadcast_mark").first()
        if feed is None:
            return None
        kept = PersonEvent.objects.filter(player_id=player_id, seq__gt=after, seq__lte=feed[0])
        return PersonFeedRead(newest, feed[0], feed[1], list(kept.order_by("seq")[:limit]))
    with _cursor() as cursor:
        cursor.execute(_person_feed_sql(), [after, limit, _db(PersonFeed, "player", player_id)])
        rows = cursor.fetchall()
    if not rows:
        return None
    newest, seq, mark = rows[0][:3]
    events: list[PersonEvent] = [
        instance_from_row(PersonEvent, _PERSON_EVENT_FIELDS, row[3:]) for row in rows if row[3] is not None
    ]
    return PersonFeedRead(newest or 0, seq, mark, events)


# --- the write ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rows:
    """What a write appends: the moves, events and hands, as GameMove, GameEvent and GameHand instances
    (their game and version set, their ids and timestamps not)."""

    moves: Sequence[GameMove]
    events: Sequence[GameEvent]
    hands: Sequence[GameHand]
    # The person events the write causes (games.services.person_feed.person_appends): stored by the same
    # statement on PostgreSQL's versioned write.
    person: "PersonAppends | None" = None


@dataclass(frozen=True, slots=True)
class PersonAppends:
    """A write's person events, as the versioned write stores them: how many each player gets (`feeds`,
    sorted by player, the order their counters are taken in) and each event with its distance `back` from
    its player's last (0: the last)."""

    feeds: list[dict[str, Any]]
    events: list[dict[str, Any]]


def _json(value: Any) -> str:
    """JSON text of `value` for a jsonb parameter: orjson's, or the standard library's for what orjson will
    not write (a key that is not a string, an integer beyond 64 bits); PostgreSQL stores the same jsonb."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, separators=(",", ":"))


def _json_loads(text: str | bytes) -> Any:
    """A JSON column's value, as json.loads reads it: by orjson, or by the standard library for what orjson
    refuses (NaN, an integer beyond 64 bits), so that what is read does not change."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


# The appended rows' own columns (besides game_id and created_at), as jsonb_to_recordset types them.
_MOVE_COLUMNS = (
    ("seq", "integer"),
    ("hand_number", "integer"),
    ("seat", "smallint"),
    ("move", "jsonb"),
    ("version", "integer"),
)
_EVENT_COLUMNS = (("seq", "integer"), ("version", "integer"), ("type", "text"), ("data", "jsonb"))
_HAND_COLUMNS = (("hand_number", "integer"), ("result", "jsonb"))

_APPENDS: tuple[tuple[str, type[models.Model], tuple[tuple[str, str], ...]], ...] = (
    ("moves", GameMove, _MOVE_COLUMNS),
    ("events", GameEvent, _EVENT_COLUMNS),
    ("hands", GameHand, _HAND_COLUMNS),
)


def _append_values(instance: models.Model, columns: Iterable[tuple[str, str]]) -> dict[str, Any]:
    return {name: getattr(instance, name) for name, _ in columns}


_GAME_CHANGING = [_field(Game, name) for name in GAME_CHANGING_FIELDS]


def _game_values(game: Game, *, jsonb_text: bool = False) -> list[Any]:
    """The game's changing fields as the database takes them; with `jsonb_text`, its JSON as text (for a
    statement that casts it to jsonb)."""
    database = connections[DEFAULT_DB_ALIAS]
    return [
        _json(value)
        if jsonb_text and value is not None and isinstance(field, models.JSONField)
        else field.get_db_prep_value(value, database, prepared=False)
        for field, value in ((field, getattr(game, field.attname)) for field in _GAME_CHANGING)
    ]


@functools.cache
def _update_sql() -> str:
    sets = ", ".join(f"{quoted(name)} = %s" for name in GAME_CHANGING_FIELDS)
    where = f"{quoted('id')} = %s AND {quoted('version')} = %s"
    return f"UPDATE {quoted(Game._meta.db_table)} SET {sets} WHERE {where}"


def _append_sql(
    name: str, model: type[models.Model], columns: tuple[tuple[str, str], ...], *, source: str
) -> str:
    """A data-modifying CTE that inserts a log's rows, from a JSON array of them, for each row of `source`
    (so none when it has none)."""
    names = ", ".join(quoted(column) for column, _ in columns)
    record = ", ".join(f"{quoted(column)} {kind}" for column, kind in columns)
    picked = ", ".join(f"r.{quoted(column)}" for column, _ in columns)
    table = quoted(model._meta.db_table)
    return (
        f"{name} AS (INSERT INTO {table} ({quoted('game_id')}, {names}, {quoted('created_at')}) "
        f"SELECT {source}.{quoted('id')}, {picked}, %s "
        f"FROM {source}, jsonb_to_recordset(%s::jsonb) AS r({record}))"
    )


@functools.cache
def _postgresql_sql(*, asynchronous_commit: bool, appends: tuple[str, ...], person: bool) -> str:
    """One statement: the versioned UPDATE, and the rows of each log named in `appends` inserted from a JSON
    array of them for each row the UPDATE returned (so none when it returned none); with `person`, the
    person events too. Its text is the same for any number of rows; a write leaves out the logs it appends
    nothing to (a play has no hand row and, mostly, no person event), so that PostgreSQL does not open
    those tables and their indexes for nothing: one text for each combination, each prepared once per
    connection that writes it."""
    game_cast = {"state": "::jsonb"}
    sets = ", ".join(f"{quoted(name)} = %s{game_cast.get(name, '')}" for name in GAME_CHANGING_FIELDS)
    parts = [
        f"updated AS (UPDATE {quoted(Game._meta.db_table)} SET {sets} "
        f"WHERE {quoted('id')} = %s AND {quoted('version')} = %s RETURNING {quoted('id')})"
    ]
    parts += [
        _append_sql(name, model, columns, source="updated")
        for name, model, columns in _APPENDS
        if name in appends
    ]
    if person:
        parts += _person_sql()
    # synchronous_commit is read at COMMIT: set for this transaction only, by the statement itself, it spares
    # a round trip (and works in autocommit, where the statement is its own transaction).
    commit = ", set_config('synchronous_commit', 'off', true)" if asynchronous_commit else ""
    return f"WITH {', '.join(parts)} SELECT (SELECT count(*) FROM updated){commit}"


def _person_sql() -> list[str]:
    """Data-modifying CTEs that store a write's person events if the UPDATE applied: each player's counter
    (games_personfeed) raised by its count, taken in player order and made when missing (as
    games.services.person_feed makes it), then the events numbered back from the counter's new seq."""
    feed, event = quoted(PersonFeed._meta.db_table), quoted(PersonEvent._meta.db_table)
    broadcast, player = quoted(PersonBroadcast._meta.db_table), quoted(Player._meta.db_table)
    older = f"SELECT MAX(b.seq) FROM {broadcast} b WHERE b.created_at <= p.created_at"
    return [
        f"feeds AS (INSERT INTO {feed} (player_id, seq, broadcast_mark) "
        f"SELECT r.player_id, r.count, COALESCE(({older}), (SELECT MIN(b.seq) - 1 FROM {broadcast} b), 0) "
        f"FROM updated, jsonb_to_recordset(%s::jsonb) AS r(player_id uuid, count integer) "
        f"JOIN {player} p ON p.id = r.player_id ORDER BY r.player_id "
        f"ON CONFLICT (player_id) DO UPDATE SET seq = {feed}.seq + excluded.seq RETURNING player_id, seq)",
        f"person AS (INSERT INTO {event} (player_id, seq, type, data, created_at) "
        f"SELECT e.player_id, feeds.seq - e.back, e.type, e.data, %s "
        f"FROM feeds JOIN jsonb_to_recordset(%s::jsonb) AS e(player_id uuid, back integer, type text, "
        f"data jsonb) ON e.player_id = feeds.player_id)",
    ]


def _save_postgresql(
    game: Game, rows: Rows, *, read_version: int, now: datetime, asynchronous_commit: bool
) -> bool:
    params: list[Any] = [*_game_values(game, jsonb_text=True), _db(Game, "id", game.pk), read_version]
    appends = []
    for (name, _, columns), instances in zip(_APPENDS, (rows.moves, rows.events, rows.hands), strict=True):
        if instances:
            appends.append(name)
            params.extend([now, _json([_append_values(instance, columns) for instance in instances])])
    person = rows.person if rows.person is not None and rows.person.events else None
    if person is not None:
        params.extend([_json(person.feeds), now, _json(person.events)])
    sql = _postgresql_sql(
        asynchronous_commit=asynchronous_commit, appends=tuple(appends), person=person is not None
    )
    with _cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return bool(row and row[0])


def _save_portable(game: Game, rows: Rows, *, read_version: int, now: datetime) -> bool:
    """Any other database: the versioned UPDATE, then the inserts only if it applied. The caller holds a
    transaction around it."""
    with connection.cursor() as cursor:
        cursor.execute(_update_sql(), [*_game_values(game), _db(Game, "id", game.pk), read_version])
        if cursor.rowcount != 1:
            return False
        game_id = _db(Game, "id", game.pk)
        created_at = _db(GameMove, "created_at", now)
        appends = zip(_APPENDS, (rows.moves, rows.events, rows.hands), strict=True)
        for (_, model, columns), instances in appends:
            if not instances:
                continue
            names = ", ".join(quoted(column) for column, _ in columns)
            marks = ", ".join(["%s"] * (len(columns) + 2))
            table, game_column, created = (
                quoted(name) for name in (model._meta.db_table, "game_id", "created_at")
            )
            cursor.executemany(
                f"INSERT INTO {table} ({game_column}, {names}, {created}) VALUES ({marks})",
                [
                    [game_id, *(_db(model, name, getattr(instance, name)) for name, _ in columns), created_at]
                    for instance in instances
                ],
            )
    return True


@functools.cache
def _insert_sql() -> str:
    """One statement: the new game's row, and each log's rows inserted from a JSON array of them (as the
    versioned write appends them)."""
    columns = ", ".join(quoted(field.column) for field in _GAME_FIELDS)
    values = ", ".join("%s::jsonb" if isinstance(field, models.JSONField) else "%s" for field in _GAME_FIELDS)
    parts = [
        f"inserted AS (INSERT INTO {quoted(Game._meta.db_table)} ({columns}) VALUES ({values}) "
        f"RETURNING {quoted('id')})"
    ]
    parts += [_append_sql(name, model, columns, source="inserted") for name, model, columns in _APPENDS]
    return f"WITH {', '.join(parts)} SELECT (SELECT count(*) FROM inserted)"


def _insert_value(field: models.Field[Any, Any], value: Any) -> Any:
    if value is None:
        return None
    if isinstance(field, models.JSONField):
        return _json(value)
    return field.get_db_prep_save(value, connections[DEFAULT_DB_ALIAS])


def game_insert(game: Game, rows: Rows) -> None:
    """Inserts a new game (as Model.save does: its auto_now fields set to now) with the rows it appends, on
    PostgreSQL in one statement, elsewhere with the ORM's inserts (in the caller's transaction). Every row of
    the write carries the same timestamp."""
    if not one_statement():
        game.save()
        GameMove.objects.bulk_create(rows.moves)
        GameEvent.objects.bulk_create(rows.events)
        GameHand.objects.bulk_create(rows.hands)
        return
    now = timezone.now()
    game.created_at = game.updated_at = now
    params = [_insert_value(field, getattr(game, field.attname)) for field in _GAME_FIELDS]
    for (_, _, columns), instances in zip(_APPENDS, (rows.moves, rows.events, rows.hands), strict=True):
        params.extend([now, _json([_append_values(instance, columns) for instance in instances])])
    with _cursor() as cursor:
        cursor.execute(_insert_sql(), params)
    game._state.adding = False
    game._state.db = DEFAULT_DB_ALIAS
    for move in rows.moves:
        move.created_at = now
    for event in rows.events:
        event.created_at = now
    for hand in rows.hands:
        hand.created_at = now


def game_save(game: Game, rows: Rows, *, read_version: int, asynchronous_commit: bool = False) -> bool:
    """Writes the game (its changing fields as they are on `game`) and appends the rows, if the game is still
    at `read_version`; whether it was. `asynchronous_commit` (PostgreSQL) commits this transaction without
    waiting for the WAL flush. The write's timestamps (updated_at, the rows' created_at) are all now."""
    now = timezone.now()
    game.updated_at = now
    if one_statement():
        return _save_postgresql(
            game, rows, read_version=read_version, now=now, asynchronous_commit=asynchronous_commit
        )
    return _save_portable(game, rows, read_version=read_version, now=now)


def one_statement() -> bool:
    """Whether game_save writes in one statement (PostgreSQL), which is atomic on its own; elsewhere it is
    several, and must run in a transaction."""
    return connection.vendor == "postgresql"
