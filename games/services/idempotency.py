"""Idempotency-Keys: a request's fingerprint, its stored first response, its replay, and their expiry."""

import hashlib
import json
from typing import Any

from django.conf import settings
from django.db import IntegrityError
from django.utils import timezone

from games import persistence
from games.errors import IdempotencyKeyReused
from games.models import IdempotentRequest, Player, TokenRotation
from games.shapes import GameView


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def idempotency_keys_expire() -> int:
    """Deletes the stored responses to Idempotency-Keys, and the token rotations kept for their retries, older
    than IDEMPOTENCY_KEY_TTL; how many."""
    horizon = _idempotency_horizon()
    requests, _ = IdempotentRequest.objects.filter(created_at__lt=horizon).delete()
    rotations, _ = TokenRotation.objects.filter(created_at__lt=horizon).delete()
    return requests + rotations


def _idempotency_horizon() -> Any:
    return timezone.now() - settings.IDEMPOTENCY_KEY_TTL


def _replay(
    *, player: Player, key: str | None, stored: persistence.Stored | None, fingerprint: str
) -> GameView | None:
    """The first response to this Idempotency-Key (`stored`, as the request's read found it), if there was one
    within IDEMPOTENCY_KEY_TTL; the same key for another request is refused. Only accepted requests are
    stored: a refused one changed nothing, so its retry is re-checked. An expired key the beat job has not
    deleted yet is deleted here, and the request is new."""
    if key is None or stored is None:
        return None
    if stored.created_at < _idempotency_horizon():
        IdempotentRequest.objects.filter(player=player, key=key).delete()
        return None
    if stored.fingerprint != fingerprint:
        raise IdempotencyKeyReused()
    return stored.response


def _remember(*, player: Player, key: str | None, fingerprint: str, view: GameView) -> None:
    """Stores the response under its key. Another request with the same key, on another game and so not
    held back by this game's lock, may have stored its own meanwhile: this one is then refused (and rolled
    back) as a reuse of the key."""
    if key is None:
        return
    try:
        IdempotentRequest.objects.create(
            player=player,
            key=key,
            fingerprint=fingerprint,
            kind=IdempotentRequest.Kind.GAME_VIEW,
            response=view,
        )
    except IntegrityError:
        # No savepoint: the refusal propagates out of the request's transaction, which is rolled back whole.
        raise IdempotencyKeyReused() from None
