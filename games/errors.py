"""The errors of `games` below its views: each names its stable code and knows nothing of HTTP."""

from collections.abc import Mapping
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


class InvalidCursor(DomainError):
    code = "invalid_cursor"


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
        super().__init__(f"Only the person who created the table may {what}.")


class GameNotOver(DomainError):
    code = "game_not_over"

    def __init__(self) -> None:
        super().__init__("A rematch follows a finished game; this one is still being played.")
