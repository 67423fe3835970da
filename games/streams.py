"""A seated person's live feed of a game: the tickets that open (and re-open) it from a browser for hours, and
the loop that sends each event of the log, as the person's seat may see it, as soon as its write commits.

The event log (GameEvent) is what a stream sends, read after the last seq the client has: so a stream is
complete and per seat, and a client that reconnects with the last id it got misses nothing and gets nothing
twice. A wake-up (games.notifications) only says when to read again."""

import asyncio
import logging
import random
import time
import weakref
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.core import signing
from django.db import InterfaceError, OperationalError

from games import notifications, selectors
from games.errors import InvalidTicket
from games.models import Player
from games.services.person_feed import person_feed_page
from games.shapes import EventView, PersonEventView
from kingscorner.off_loop import Priority, read_off_loop

logger = logging.getLogger(__name__)

TICKET_SALT = "kingscorner.games.stream-ticket"


def ticket_clock() -> float:
    """Seconds since the epoch; the tickets' clock (tests move it)."""
    return time.time()


@dataclass(frozen=True, slots=True)
class StreamTicket:
    """A verified ticket: whose it is, for which stream (a game's; None: the player's person stream), until
    when."""

    player_id: str
    game_id: str | None
    expires_at: datetime


def _token_mark(player: Player) -> str:
    # A ticket dies with the token it was asked for with: rotating a token revokes the tickets it got.
    return player.token_rotated_at.isoformat()


def ticket_issue(*, game_id: Any | None, player: Player) -> tuple[str, datetime]:
    """A new ticket for the player's stream of a game they sit at (GameNotFound otherwise), or, with no
    game, for their person stream: a token signed with SECRET_KEY that names the player and the one stream
    and expires STREAM_TICKET_SECONDS from now. It is not the player's token and gives nothing else: it only
    opens that stream, for that player, until then."""
    if game_id is not None:
        selectors.game_seat_of(game_id=game_id, player=player)
    expires = int(ticket_clock()) + settings.STREAM_TICKET_SECONDS
    game = None if game_id is None else str(game_id)
    payload = {"player": str(player.id), "game": game, "token": _token_mark(player), "exp": expires}
    ticket = signing.Signer(salt=TICKET_SALT).sign_object(payload, compress=False)
    return ticket, datetime.fromtimestamp(expires, UTC)


def ticket_read(ticket: str) -> tuple[Player, StreamTicket]:
    """The player and game a ticket names; InvalidTicket when it was not signed here, has expired, or its
    player has rotated their token since."""
    try:
        payload = signing.Signer(salt=TICKET_SALT).unsign_object(ticket)
        player_id, game_id, mark, expires = (payload[key] for key in ("player", "game", "token", "exp"))
    except (signing.BadSignature, TypeError, KeyError, ValueError):
        raise InvalidTicket("This is not a stream ticket this server gave out.") from None
    if game_id is not None and not isinstance(game_id, str):
        raise InvalidTicket("This is not a stream ticket this server gave out.")
    if not isinstance(expires, int) or ticket_clock() >= expires:
        raise InvalidTicket("The stream ticket has expired: ask for a new one (POST stream-tickets).")
    player = Player.objects.filter(id=player_id).first()
    if player is None or _token_mark(player) != mark:
        raise InvalidTicket("The token this ticket was asked for has been replaced: ask for a new one.")
    return player, StreamTicket(
        player_id=str(player_id), game_id=game_id, expires_at=datetime.fromtimestamp(expires, UTC)
    )


# --- the stream ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Nothing happened for STREAM_HEARTBEAT_SECONDS."""


HEARTBEAT = Heartbeat()


@dataclass
class _Read:
    """A read of a game's log on its way: when a reader thread began it (time.monotonic; None while it
    waits for one)."""

    task: "asyncio.Task[selectors.GameLog | None] | None" = None
    began_at: float | None = None


class _SharedReads:
    """The streams of one game in this process, woken by one commit, read the log once: the first to ask
    reads it, from the seq it has, and the others that ask from the same seq while that read is on its way
    wait for it. A read that began before a stream was woken may miss what woke it, so it is not shared with
    that stream; one that waits yet for a reader thread (under load, behind others) is shared with any. Each
    takes its own seat's page of it."""

    def __init__(self) -> None:
        self._reads: dict[tuple[str, int], _Read] = {}

    async def read(
        self, game_id: Any, after: int, woken_at: float, priority: Priority
    ) -> selectors.GameLog | None:
        """The log after `after`, read since `woken_at` (time.monotonic)."""
        key = (str(game_id), after)
        pending = self._reads.get(key)
        if pending is None or (pending.began_at is not None and pending.began_at <= woken_at):
            pending = _Read()
            read = pending

            def log() -> selectors.GameLog | None:
                read.began_at = time.monotonic()
                return selectors.stream_log(game_id=game_id, after=after)

            task = asyncio.get_running_loop().create_task(read_off_loop(log, priority))
            pending.task = task
            self._reads[key] = pending
            task.add_done_callback(lambda _: self._forget(key, read))
        assert pending.task is not None
        # Shielded: a stream whose client left does not cancel a read the others wait for.
        return await asyncio.shield(pending.task)

    def _forget(self, key: tuple[str, int], read: _Read) -> None:
        if self._reads.get(key) is read:
            del self._reads[key]


_shared_reads: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _SharedReads] = (
    weakref.WeakKeyDictionary()
)


def _reads() -> _SharedReads:
    loop = asyncio.get_running_loop()
    if loop not in _shared_reads:
        _shared_reads[loop] = _SharedReads()
    return _shared_reads[loop]


async def game_events_live(
    *, game_id: Any, player_id: Any, seat: int, after: int
) -> AsyncGenerator[EventView | Heartbeat, None]:
    """Every event after seq `after` as `seat` may see it, then each new one as its write commits, with a
    heartbeat whenever nothing was sent for STREAM_HEARTBEAT_SECONDS; it ends after the game's last event
    once the game is over, or when the player no longer sits at the seat."""
    loop = asyncio.get_running_loop()
    heartbeat = settings.STREAM_HEARTBEAT_SECONDS
    reads = _reads()
    async with notifications.listening(game_id) as listener:
        # When the stream began to listen, then when it was last woken: a read it shares began after that.
        woken_at = time.monotonic()
        # The first heartbeat comes at a random point of the second half of the interval: streams opened
        # together (a server's restart reconnects all of them) would otherwise beat, read the log and renew
        # their leases all in the same instant, each time.
        sent_at = loop.time() - random.uniform(0, heartbeat / 2)
        # The first read, a heartbeat's and a poll's are routine; a wake-up's goes ahead of them.
        priority = Priority.ROUTINE
        while True:
            try:
                log = await reads.read(game_id, after, woken_at, priority)
            except (OperationalError, InterfaceError) as error:
                # The database went away: the stream ends as it does when it is over, and the client comes
                # back (with the last id it got) once it answers again.
                logger.warning("a stream of game %s ended: the database does not answer (%s)", game_id, error)
                return
            page = selectors.stream_page(log, player_id=player_id, seat=seat, after=after)
            if page is None:
                return
            for event in page.events:
                yield event
            if page.events:
                sent_at = loop.time()
            after = page.last
            if page.more:
                continue
            if page.over:
                return
            wait = sent_at + heartbeat - loop.time()
            if page.closes_in is not None:
                # A finished game's stream waits for its rematch until the window closes.
                wait = min(wait, page.closes_in)
            if not listener.reliable:
                wait = min(wait, notifications.POLL_SECONDS)
            woken = await listener.wait(wait)
            woken_at = time.monotonic()
            priority = Priority.WOKEN if woken else Priority.ROUTINE
            if not woken and loop.time() >= sent_at + heartbeat:
                yield HEARTBEAT
                sent_at = loop.time()
            # Read again: after a wake-up, a poll, or a heartbeat (which also covers a wake-up that was lost).


def game_events_now(*, game_id: Any, player_id: Any, seat: int, after: int) -> Iterator[EventView]:
    """Every event after seq `after` as `seat` may see it, as they are now: the stream a WSGI server sends,
    which cannot hold a connection open without holding a worker. It ends at once; the client reconnects
    after the `retry` the stream names, with the last id it got."""
    while True:
        log = selectors.stream_log(game_id=game_id, after=after)
        page = selectors.stream_page(log, player_id=player_id, seat=seat, after=after)
        if page is None:
            return
        yield from page.events
        after = page.last
        if not page.more:
            return


# --- the person stream --------------------------------------------------------------------------------------


async def person_events_live(
    *, player_id: Any, after: int | None
) -> AsyncGenerator[PersonEventView | Heartbeat, None]:
    """Every event of the player's feed after seq `after` (None: from the oldest kept; led by a `resync` when
    it cannot resume from there), then each new one as its write commits, with a heartbeat whenever nothing
    was sent for STREAM_HEARTBEAT_SECONDS. It ends only when the player is gone (or the database does not
    answer)."""
    loop = asyncio.get_running_loop()
    heartbeat = settings.STREAM_HEARTBEAT_SECONDS
    async with notifications.listening(notifications.person_key(player_id)) as listener:
        sent_at = loop.time()
        priority = Priority.ROUTINE
        while True:
            try:
                page = await read_off_loop(
                    partial(person_feed_page, player_id=player_id, after=after), priority
                )
            except (OperationalError, InterfaceError) as error:
                logger.warning("a person stream ended: the database does not answer (%s)", error)
                return
            if page is None:
                return
            for event in page.events:
                yield event
            if page.events:
                sent_at = loop.time()
            after = page.last
            if page.more:
                continue
            wait = sent_at + heartbeat - loop.time()
            if not listener.reliable:
                wait = min(wait, notifications.POLL_SECONDS)
            woken = await listener.wait(wait)
            priority = Priority.WOKEN if woken else Priority.ROUTINE
            if not woken and loop.time() >= sent_at + heartbeat:
                yield HEARTBEAT
                sent_at = loop.time()


def person_events_now(*, player_id: Any, after: int | None) -> Iterator[PersonEventView]:
    """Every event of the player's feed after seq `after` (None: from the oldest kept), as they are now: a
    WSGI server's person stream, which ends at once (the client reconnects after the stream's `retry`)."""
    while True:
        page = person_feed_page(player_id=player_id, after=after)
        if page is None:
            return
        yield from page.events
        after = page.last
        if not page.more:
            return
