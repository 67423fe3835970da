"""The person stream's feed (GET players/me/stream): each player's own sequence of the events that concern
them at every table and of the daily deal's, written in the transaction of the write that causes them.

- A write adds its players' events under each player's counter row (PersonFeed), locked in a fixed order
  (sorted ids) so that two writes never wait on each other in a circle: `seq` is then contiguous per player
  and in commit order. The table's events come from the game's log as it is saved (`game_notices`, called by
  games.services.writes.game_write); a few come from the service that causes them (`person_events_add`).
- A daily event is for everyone: one PersonBroadcast row, not one a player. A player's feed takes the
  broadcasts it has not had into its own sequence when its stream reads (`person_feed_page`), under the
  same counter lock; a feed made after a broadcast starts after it.
- Events are kept PERSON_EVENTS_RETENTION_SECONDS (`person_events_prune`, the beat job). A stream that
  resumes after an id whose following events are gone, or after an id never given, gets `resync` first."""

import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Max
from django.utils import timezone

from games import notifications, persistence
from games.models import Game, GameEvent, PersonBroadcast, PersonEvent, PersonFeed, Player
from games.persistence import PersonAppends
from games.shapes import PersonEventView

# The events of a game's log that concern the people seated at it, and the person event each becomes.
_TABLE_EVENTS = {"seat_taken", "seat_left", "game_started", "turn_start", "game_over", "rematch"}
# At most this many events a read of a person stream.
PERSON_PAGE = 200
BROADCAST_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class PersonNotice:
    """One event for one player's feed, not stored yet."""

    player_id: str
    type: str
    data: Mapping[str, Any]


def seated_people(game: Game) -> dict[int, str]:
    """Seat -> the player seated there, for each seat a person holds, from the game's row (`seating`)."""
    if game.seating is None:
        return {0: str(game.player_id)}
    return {seat: str(player) for seat, _kind, _level, _name, player in game.seating if player}


def game_notices(game: Game, events: Sequence[GameEvent]) -> list[PersonNotice]:
    """The person events that a write's game events cause, to the people seated once it is saved: a seat
    taken (to the others), a seat left, the start, a person's turn (to them), the game's end, a rematch."""
    people = seated_people(game)
    notices: list[PersonNotice] = []
    for event in events:
        if event.type not in _TABLE_EVENTS:
            continue
        kind, data = event.type, event.data
        if kind == "turn_start":
            player = people.get(data["seat"])
            if player is not None:
                fields = {"game": str(game.pk), "seat": data["seat"], "deadline": data.get("deadline")}
                notices.append(PersonNotice(player, "your_turn", fields))
            continue
        fields = {"game": str(game.pk)}
        if kind in ("seat_taken", "seat_left"):
            fields |= {"seat": data["seat"], "name": data["name"]}
        elif kind == "rematch":
            fields["new_game"] = data["new_game"]
        for seat, player in people.items():
            if kind == "seat_taken" and seat == data["seat"]:
                continue
            notices.append(PersonNotice(player, kind, fields))
    return notices


def _table(model: type[Any]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _player_value(player_id: Any) -> Any:
    value = player_id if isinstance(player_id, uuid.UUID) else uuid.UUID(str(player_id))
    return Player._meta.pk.get_db_prep_value(value, connection)


def _counter_sql() -> str:
    """Adds to a player's counter, making it if it is missing (starting after the broadcasts older than the
    player, or after every broadcast kept when none is), and holds its row locked: the new `seq`. The same
    text on PostgreSQL and SQLite."""
    feed, broadcast, player = _table(PersonFeed), _table(PersonBroadcast), _table(Player)
    older = f"SELECT MAX(b.seq) FROM {broadcast} b WHERE b.created_at <= p.created_at"
    return (
        f"INSERT INTO {feed} (player_id, seq, broadcast_mark) "
        f"SELECT p.id, %s, COALESCE(({older}), (SELECT MIN(b.seq) - 1 FROM {broadcast} b), 0) "
        f"FROM {player} p WHERE p.id = %s "
        f"ON CONFLICT (player_id) DO UPDATE SET seq = {feed}.seq + excluded.seq "
        f"RETURNING seq, broadcast_mark"
    )


def _counter_add(player_id: Any, count: int) -> tuple[int, int] | None:
    """The player's counter after adding `count` (seq, broadcast mark), its row locked until the
    transaction ends; None for a player who is gone."""
    with connection.cursor() as cursor:
        cursor.execute(_counter_sql(), [count, _player_value(player_id)])
        row = cursor.fetchone()
    return None if row is None else (int(row[0]), int(row[1]))


def _by_player(notices: Sequence[PersonNotice]) -> dict[str, list[PersonNotice]]:
    """The notices by player, the players in sorted order (the order their counters are taken in)."""
    by_player: dict[str, list[PersonNotice]] = defaultdict(list)
    for notice in notices:
        by_player[str(notice.player_id)].append(notice)
    return {player_id: by_player[player_id] for player_id in sorted(by_player)}


def person_appends(notices: Sequence[PersonNotice]) -> PersonAppends:
    """The notices as a game's versioned write stores them in its one statement (games.persistence); once
    it has, `person_streams_wake`."""
    feeds, events = [], []
    for player_id, mine in _by_player(notices).items():
        feeds.append({"player_id": player_id, "count": len(mine)})
        events += [
            {"player_id": player_id, "back": len(mine) - 1 - index, "type": notice.type, "data": notice.data}
            for index, notice in enumerate(mine)
        ]
    return PersonAppends(feeds=feeds, events=events)


def person_streams_wake(notices: Sequence[PersonNotice]) -> None:
    """Wakes the person streams of the notices' players once the current transaction commits (at once
    outside one: after the statement that stored them)."""
    for player_id in _by_player(notices):
        notifications.person_changed(player_id=player_id)


def person_events_add(notices: Sequence[PersonNotice]) -> None:
    """Stores the events in their players' feeds, in this transaction, and wakes the players' person streams
    once it commits. Each player's counter is taken in sorted order of the players' ids."""
    if not notices:
        return
    now = timezone.now()
    rows: list[PersonEvent] = []
    with transaction.atomic():
        for player_id, mine in _by_player(notices).items():
            counter = _counter_add(player_id, len(mine))
            if counter is None:
                continue
            last = counter[0]
            for seq, notice in enumerate(mine, start=last - len(mine) + 1):
                rows.append(
                    PersonEvent(
                        player_id=player_id, seq=seq, type=notice.type, data=dict(notice.data), created_at=now
                    )
                )
            notifications.person_changed(player_id=player_id)
        PersonEvent.objects.bulk_create(rows)


# --- broadcasts (the daily deal's events) -------------------------------------------------------------------


def person_broadcast(*, type: str, key: str, data: Mapping[str, Any]) -> bool:
    """A broadcast to every person's feed, once per `key`, in this transaction; every person stream is woken
    once it commits. Whether it was added (False: it was already). Its seq is the next one: a concurrent
    broadcast that takes it first makes this one try the next."""
    for _ in range(BROADCAST_ATTEMPTS):
        if PersonBroadcast.objects.filter(key=key).exists():
            return False
        newest = PersonBroadcast.objects.aggregate(newest=Max("seq"))["newest"] or 0
        try:
            with transaction.atomic():
                PersonBroadcast.objects.create(seq=newest + 1, key=key, type=type, data=dict(data))
        except IntegrityError:
            continue
        notifications.broadcast_changed()
        return True
    raise RuntimeError(f"the broadcast {key} could not take a seq")


def _broadcasts_take(player_id: Any) -> int | None:
    """Takes the broadcasts the player's feed has not had into it, under its counter's lock (a `resync`
    first when the broadcasts after its mark were pruned already); the feed's seq, None for a player who is
    gone."""
    with transaction.atomic():
        counter = _counter_add(player_id, 0)
        if counter is None:
            return None
        seq, mark = counter
        broadcasts = list(PersonBroadcast.objects.filter(seq__gt=mark).order_by("seq"))
        if not broadcasts:
            return seq
        # Each row is stamped with the time it is stored, which retention counts from (a row stamped with
        # its broadcast's older time could be pruned before the events under it, leaving a gap); its `at`
        # stays the broadcast's, the time the daily event happened.
        now = timezone.now()
        rows = []
        if broadcasts[0].seq > mark + 1:
            rows.append(
                PersonEvent(player_id=player_id, type="resync", data={"reason": "expired"}, created_at=now)
            )
        rows += [
            PersonEvent(
                player_id=player_id,
                type=row.type,
                data={**row.data, "at": _time_text(row.created_at)},
                created_at=now,
            )
            for row in broadcasts
        ]
        for offset, row in enumerate(rows, start=1):
            row.seq = seq + offset
        PersonEvent.objects.bulk_create(rows)
        PersonFeed.objects.filter(player_id=player_id).update(
            seq=seq + len(rows), broadcast_mark=broadcasts[-1].seq
        )
        return seq + len(rows)


# --- reading a feed -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PersonPage:
    """The events of a player's feed after a seq, at most PERSON_PAGE, led by a `resync` when the seq asked
    after cannot be resumed from; `last` is the seq to read after next."""

    events: list[PersonEventView]
    last: int
    more: bool


def _time_text(moment: datetime) -> str:
    """A time as the API renders one (ISO 8601, UTC as `Z`)."""
    text = moment.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _view(event: PersonEvent) -> PersonEventView:
    """The event as a stream sends it; `at` is when it happened: a taken-in broadcast's data holds its
    broadcast's time, every other event happened when it was stored."""
    view: dict[str, Any] = {"seq": event.seq, "type": event.type, "at": event.created_at, **event.data}
    return view  # type: ignore[return-value]


def _resync(seq: int, reason: str) -> PersonEventView:
    view: dict[str, Any] = {"seq": seq, "type": "resync", "at": timezone.now(), "reason": reason}
    return view  # type: ignore[return-value]


def _events_after(player_id: Any, after: int, latest: int) -> list[PersonEvent]:
    return list(
        PersonEvent.objects.filter(player_id=player_id, seq__gt=after, seq__lte=latest).order_by("seq")[
            :PERSON_PAGE
        ]
    )


def person_feed_page(*, player_id: Any, after: int | None) -> PersonPage | None:
    """The player's feed after seq `after` (None, for a stream opened with no id: from the oldest event
    kept), the broadcasts it has not had taken in first; None for a player who is gone. After an id whose
    following events are no longer kept (`expired`; 0 too, the id before the first event, which a `resync`
    may have given) or that was never given (`unknown_id`, greater than the newest), a `resync` (its id the
    seq before the oldest event kept) leads the oldest events kept."""
    fresh = after is None
    after = after or 0
    # One statement (persistence.person_feed_after) when the feed has every broadcast already, as it has
    # but once a day; a feed that has not is first brought up to date, under its lock.
    read = persistence.person_feed_after(player_id=player_id, after=after, limit=PERSON_PAGE)
    events: list[PersonEvent] | None = None
    if read is None or read.broadcast_mark < read.newest_broadcast:
        latest = _broadcasts_take(player_id)
        if latest is None:
            return None
    else:
        latest = read.seq
        if after <= latest:
            events = read.events
    unknown = after > latest
    if unknown:
        after = 0
    if events is None:
        events = _events_after(player_id, after, latest)
    views: list[PersonEventView] = []
    if unknown:
        views.append(_resync(events[0].seq - 1 if events else latest, "unknown_id"))
    elif not fresh and not events and after < latest:
        views.append(_resync(latest, "expired"))
    # Wherever the events kept skip a seq (before the first, or between two: retention removed what was
    # between), a `resync` with the seq before the next one kept stands in the gap: never a silent one.
    previous = None if fresh or unknown else after
    for event in events:
        if previous is not None and event.seq > previous + 1:
            views.append(_resync(event.seq - 1, "expired"))
        views.append(_view(event))
        previous = event.seq
    # A stream opened with no id whose events kept are none (all pruned) has nothing to catch up on: it goes
    # on from the newest seq, with no `resync` (it had no position to lose).
    last = events[-1].seq if events else (latest if views or fresh else after)
    return PersonPage(events=views, last=last, more=last < latest)


# --- retention ----------------------------------------------------------------------------------------------


def person_events_horizon() -> datetime:
    return timezone.now() - timedelta(seconds=settings.PERSON_EVENTS_RETENTION_SECONDS)


def person_events_prune() -> int:
    """The beat job: deletes the person events and broadcasts older than PERSON_EVENTS_RETENTION_SECONDS
    (the newest broadcast stays, so that the broadcasts' seq goes on without a gap); how many events."""
    horizon = person_events_horizon()
    deleted, _ = PersonEvent.objects.filter(created_at__lt=horizon).delete()
    newest = PersonBroadcast.objects.aggregate(newest=Max("seq"))["newest"]
    PersonBroadcast.objects.filter(created_at__lt=horizon).exclude(seq=newest).delete()
    return deleted
