"""A player's bearer token: a new one, its SHA-256 (all that is stored), its sealing for a retried rotation.
Pure functions: no Django, no HTTP."""

import hashlib
import hmac
import secrets
from dataclasses import dataclass

TOKEN_PREFIX = "kc_"


@dataclass(frozen=True, slots=True)
class TokenHash:
    """A request's token not looked up yet, by its SHA-256: what a service that looks the token up with what
    it loads (games.persistence.game_load) is given in place of a player."""

    value: str


def token_new() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _keystream(previous_token: str, idempotency_key: str) -> bytes:
    # HMAC keyed by the replaced token: the stored SHA-256 of that token does not give it.
    message = b"kingscorner token rotation replay\0" + idempotency_key.encode()
    return hmac.new(previous_token.encode(), message, hashlib.sha512).digest()


def token_seal(token: str, *, previous_token: str, idempotency_key: str) -> str:
    """`token` encrypted for a retry of its rotation: XOR with a keystream that only the replaced token and
    the Idempotency-Key give. Each replaced token is rotated from once, so each keystream is used once."""
    stream = _keystream(previous_token, idempotency_key)
    data = token.encode()
    if len(data) > len(stream):
        raise ValueError("a token is longer than the keystream")
    return bytes(a ^ b for a, b in zip(data, stream, strict=False)).hex()


def token_unseal(sealed: str, *, previous_token: str, idempotency_key: str) -> str:
    """The token token_seal sealed; with another token or key, bytes that are no token (a token is ASCII,
    and Latin-1 decodes any bytes)."""
    stream = _keystream(previous_token, idempotency_key)
    return bytes(a ^ b for a, b in zip(bytes.fromhex(sealed), stream, strict=False)).decode("latin-1")
