"""The deterministic shuffle of docs/rules.md, fixed forever: seeded stream, hand seeds, daily seeds."""

import hashlib
import hmac
from datetime import date

from games.engine.cards import DECK

SEED_BYTES = 32
_TWO_64 = 1 << 64


class SeededStream:
    """Block k = SHA-256(seed ‖ k as 8 bytes big-endian), read as consecutive 8-byte big-endian integers."""

    __slots__ = ("_seed", "_block", "_buffer", "_offset")

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._block = 0
        self._buffer = b""
        self._offset = 0

    def next_u64(self) -> int:
        if self._offset + 8 > len(self._buffer):
            self._buffer = hashlib.sha256(self._seed + self._block.to_bytes(8, "big")).digest()
            self._block += 1
            self._offset = 0
        value = int.from_bytes(self._buffer[self._offset : self._offset + 8], "big")
        self._offset += 8
        return value

    def uniform(self, m: int) -> int:
        """An integer in 0..m-1 without modulo bias."""
        if m <= 0:
            raise ValueError("uniform() needs a positive bound")
        limit = _TWO_64 - (_TWO_64 % m)
        value = self.next_u64()
        while value >= limit:
            value = self.next_u64()
        return value % m


def shuffle(seed: bytes) -> list[str]:
    """The deck shuffled from `seed`; its first card is the top of the stock."""
    deck = list(DECK)
    stream = SeededStream(seed)
    for i in range(len(deck) - 1, 0, -1):
        j = stream.uniform(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def hand_seed(game_seed: bytes, hand: int) -> bytes:
    """The seed of hand `hand` (1, 2, ...) of a game with seed `game_seed`."""
    return hashlib.sha256(game_seed + b"hand" + hand.to_bytes(4, "big")).digest()


def daily_seed(secret: bytes | str, day: date | str) -> bytes:
    """HMAC-SHA256(secret, "kingscorner-daily:YYYY-MM-DD")."""
    key = secret.encode() if isinstance(secret, str) else secret
    text = day.isoformat() if isinstance(day, date) else day
    return hmac.new(key, f"kingscorner-daily:{text}".encode(), hashlib.sha256).digest()


def commitment(seed: bytes) -> str:
    """The public commitment to a seed: SHA-256(seed) in hex."""
    return hashlib.sha256(seed).hexdigest()
