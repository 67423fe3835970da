"""How long, and how often, a token rotation can be replayed: the retry of a rotation whose response was lost
gets the same new token only with the rotation's Idempotency-Key (a UUID: 128 bits that cannot be guessed),
within ROTATION_REPLAY_SECONDS, until the new token has been used once, and while it is still the player's.

A rotation exists to kill a token that leaked, so the leaked token must never buy the new one: whoever holds
it cannot guess the key, a replay after the window or after the new token's first use is refused exactly as a
wrong key is (401 `invalid_token`, as any token that is no longer valid), so a refusal confirms nothing, and
a replay after a newer rotation never returns a token that is dead."""

import hmac
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import caches
from django.utils import timezone

from games.models import Player, TokenRotation
from games.tokens import token_hash, token_unseal
from kingscorner.api.headers import InvalidIdempotencyKey
from kingscorner.domain import DomainError

REFUSED_DETAIL = "The token is not valid; it may have been replaced."


class ReplayRefused(DomainError):
    """A rotation's replay refused: the key is not the rotation's, the window has passed, or the new token
    was used or replaced since. It reads as any token that is not valid."""

    code = "invalid_token"

    def __init__(self) -> None:
        super().__init__(REFUSED_DETAIL)


def replay_horizon() -> datetime:
    """Rotations made before this can no longer be replayed (nor reached with their replaced token)."""
    return timezone.now() - timedelta(seconds=settings.ROTATION_REPLAY_SECONDS)


def rotation_key_check(key: str | None) -> None:
    """An Idempotency-Key on a rotation is a UUID (128 bits), in its usual text form."""
    if key is None:
        return
    try:
        uuid.UUID(key)
    except ValueError:
        raise InvalidIdempotencyKey(
            "An Idempotency-Key on a token rotation is a UUID (128 bits), e.g. "
            "9b2f6c1e-3d4a-4f5b-8c7d-1e2f3a4b5c6d."
        ) from None
    if len(key) != 36:
        raise InvalidIdempotencyKey(
            "An Idempotency-Key on a token rotation is a UUID in its 36-character form."
        )


# A player is built with token_rotated_at before its insert sets created_at, so a token never rotated has
# token_rotated_at <= created_at however slow the registration (players registered before migration 0014
# have it microseconds after, from the same insert); a rotation is a request later.
NEVER_ROTATED = timedelta(milliseconds=1)


def _open_marker(player_id: object) -> str:
    return f"rotation-replay-open:{player_id}"


def replay_opened(player: Player) -> None:
    """Called when a rotation with an Idempotency-Key commits: its replay is open until the new token's first
    use, which this cache entry tells (so that no other request writes anything)."""
    caches["default"].set(_open_marker(player.pk), 1, settings.ROTATION_REPLAY_SECONDS)


def replay_end_on_first_use(player: Player) -> None:
    """Called when a player's current token authenticates: a rotation made within the window can no longer
    be replayed once its new token has been used. Outside the window there is nothing to end (no call at
    all); within it, one cache call, and a write only at the new token's first use."""
    rotated_at = player.token_rotated_at
    if rotated_at < replay_horizon() or rotated_at - player.created_at < NEVER_ROTATED:
        return
    if caches["default"].delete(_open_marker(player.pk)):
        TokenRotation.objects.filter(player=player).exclude(sealed_token="").update(sealed_token="")


def replayed_token(rotation: TokenRotation, player: Player, token: str, idempotency_key: str) -> str:
    """The new token of a rotation replayed with its replaced token and Idempotency-Key: only with the
    rotation's key, while the new token is unused (its seal is cleared at its first use) and still the
    player's; any other replay is refused as a token that is not valid."""
    if not rotation.sealed_token or not hmac.compare_digest(rotation.idempotency_key, idempotency_key):
        raise ReplayRefused()
    new = token_unseal(rotation.sealed_token, previous_token=token, idempotency_key=idempotency_key)
    # The player's token as it is now: `player` may have been read before the rotation committed (a retry
    # sent while the rotation was under way).
    current = Player.objects.filter(pk=player.pk).values_list("token_hash", flat=True).first()
    if current is None or not hmac.compare_digest(token_hash(new), current):
        raise ReplayRefused()
    return new
