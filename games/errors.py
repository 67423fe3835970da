"""The errors of `games` below its views: each names its stable code and knows nothing of HTTP."""

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from games.engine import EngineError
from kingscorner.domain import DomainError


class GameNotFound(DomainError):
    """No game with this id is the caller's: someone else's game is as good as missing."""

    code = "game_not_found"

    def __init__(self, game_id: Any) -> None:
        super().__init__(f"You have no game {game_id}.")


class VersionConflict(DomainError):
    """The request was made against another version than the game's; `current` is the game as it is."""

    code = "version_conflict"

    def __init__(self, *, version: int, expected: int, current: Mapping[str, Any]) -> None:
        super().__init__(
            f"The game is at version {version}, not {expected}: look at `current` and send your moves again.",
            members={"current": current},
            headers={"ETag": f'"{version}"'},
        )
        self.version = version


class MoveRefused(DomainError):
    """One move of a request cannot be read or made; its code is the engine's reason, and nothing of the
    request was applied."""

    def __init__(self, error: EngineError, *, index: int, move: Any = None) -> None:
        where = f"Move {index}" if move is None else f"Move {index} ({move})"
        super().__init__(f"{where}: {error.detail} Nothing was applied.", members={"move_index": index})
        self.code = error.code


class TooManyMoves(DomainError):
    code = "too_many_moves"

    def __init__(self, *, count: int, limit: int) -> None:
        super().__init__(f"At most {limit} moves a request; got {count}.")


class IdempotencyKeyReused(DomainError):
    code = "idempotency_key_reused"

    def __init__(self) -> None:
        super().__init__(
            "This Idempotency-Key was used for a different request; use a new key for each request."
        )


class ImpossiblePosition(DomainError):
    """A position sent for analysis that no game can reach; its code names the fault."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code


class InvalidStatus(DomainError):
    code = "invalid_status"


class InvalidLimit(DomainError):
    code = "invalid_limit"


def page_limit(value: str | None, *, default: int, maximum: int) -> int:
    """A list's `limit` query parameter, the same on every list: `default` without one, else a whole number
    written in ASCII digits from 1 to `maximum` (str.isdigit() alone also takes "²", which int() refuses);
    anything else is InvalidLimit."""
    if value is None:
        return default
    if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= maximum:
        raise InvalidLimit(f"limit is a whole number from 1 to {maximum}.")
    return int(value)


class InvalidCursor(DomainError):
    code = "invalid_cursor"


class InvalidToken(DomainError):
    """No player has the request's token (it may have been replaced by a rotation)."""

    code = "invalid_token"

    def __init__(self) -> None:
        super().__init__("The token is not valid; it may have been replaced.")


class TokenRotated(DomainError):
    """The token a rotation was sent with was replaced meanwhile, by a concurrent or an earlier rotation."""

    code = "token_rotated"

    def __init__(self) -> None:
        super().__init__(
            "This token was already replaced by another rotation. If that was yours and its response was "
            "lost, send it again with the same Idempotency-Key to get its new token."
        )


class InvalidTicket(DomainError):
    """A stream ticket that was not signed here, has expired, was asked for with a token since replaced, or
    names another game."""

    code = "invalid_ticket"


# --- tables with several people -----------------------------------------------------------------------------


class InvitationNotFound(DomainError):
    """No live invitation has this code: unknown or revoked, which is not told apart (nor the game named)."""

    code = "invitation_not_found"

    def __init__(self) -> None:
        super().__init__("No invitation with this code is open: it is unknown or was revoked.")


class TableFull(DomainError):
    code = "table_full"

    def __init__(self) -> None:
        super().__init__("Every seat of this table is taken.")


class GameStarted(DomainError):
    code = "game_started"

    def __init__(self) -> None:
        super().__init__("This game has started: it takes no more people, and starts once only.")


class GameNotStarted(DomainError):
    code = "game_not_started"

    def __init__(self) -> None:
        super().__init__(
            "The table is waiting for its people: nothing is dealt until its seats are taken or its creator "
            "starts it."
        )


class NotCreator(DomainError):
    code = "not_creator"

    def __init__(self, what: str) -> None:
        super().__init__(
            f"Only the table's creator (`creator_seat`: who made it, or the person the role passed to) may "
            f"{what}."
        )


class GameNotOver(DomainError):
    code = "game_not_over"

    def __init__(self) -> None:
        super().__init__("A rematch follows a finished game; this one is still being played.")


# --- a seat handed to a computer for an absent person (POST games/{id}/seats/{seat}/replace) ----------------


class SeatNotFound(DomainError):
    code = "seat_not_found"

    def __init__(self, *, seat: int, seats: int) -> None:
        super().__init__(f"The table has no seat {seat}: its seats are 0 to {seats - 1}.")


class SeatIsYours(DomainError):
    code = "seat_is_yours"

    def __init__(self) -> None:
        super().__init__("That seat is yours: to hand it to a computer, leave the table (POST leave).")


class TableHasClock(DomainError):
    code = "table_has_clock"

    def __init__(self) -> None:
        super().__init__(
            "The table has a turn clock: a turn past its deadline is played by a computer, and no seat is "
            "replaced."
        )


class SeatNotAPerson(DomainError):
    code = "seat_not_a_person"

    def __init__(self, seat: int) -> None:
        super().__init__(f"No person holds seat {seat}: a computer plays it.")


class SeatNotAbandoned(DomainError):
    """The seat's person is to move for less than the table's `abandon_seconds` (`replaceable_at` says when
    the seat may be replaced, and Retry-After in how many seconds), or is not to move at all (no time is
    named: they hold nobody up)."""

    code = "seat_not_abandoned"

    def __init__(self, *, seat: int, replaceable_at: datetime | None, now: datetime) -> None:
        if replaceable_at is None:
            super().__init__(
                f"It is not seat {seat}'s turn: only the person to move can hold the table up.",
                members={"replaceable_at": None},
            )
            return
        wait = max(1, math.ceil((replaceable_at - now).total_seconds()))
        super().__init__(
            f"Seat {seat}'s turn began less than the table's abandon_seconds ago: it may be replaced from "
            f"{replaceable_at.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}, if that turn has not ended by then.",
            members={"replaceable_at": replaceable_at},
            headers={"Retry-After": str(wait)},
        )


class NameCrowded(DomainError):
    """Every discriminator of the name's skeleton is some player's: no more players may look like this."""

    code = "name_crowded"

    def __init__(self, *, count: int) -> None:
        super().__init__(
            f"All {count} players that a name looking like this can number apart are registered; choose "
            "another name."
        )
