"""The deterministic shuffle of docs/rules.md, fixed forever: seeded stream, hand seeds, daily seeds."""

import hashlib
import hmac
import struct
from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import date
from typing import Final

from games.engine.cards import DECK
from games.engine.masks import COMPILED

SEED_BYTES: Final = 32
_TWO_64: Final = 1 << 64
_TWO_32: Final = 1 << 32
_WORD_MAX: Final = _TWO_32 - 1
# Bounds below this take uniform()'s path on 32-bit halves, whose products stay under 2^62.
_SMALL_BOUND: Final = 1 << 29


class Uniform(ABC):
    """A source of uniform choices: a computer turn's seeded stream, or a generator of sharp's play-outs. A
    class rather than a protocol, so that compiled callers reach `uniform` through its class's method table
    rather than by looking the name up on the object."""

    __slots__ = ()

    @abstractmethod
    def uniform(self, m: int) -> int:
        """An integer in 0..m-1."""


class SeededStream(Uniform):
    """Block k = SHA-256(seed ‖ k as 8 bytes big-endian), read as consecutive 8-byte big-endian integers."""

    __slots__ = ("_seed", "_block", "_words", "_offset")

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._block = 0
        # The current block as eight 32-bit big-endian words, and the next word to read (8: none left). Two
        # words make one 64-bit integer: kept apart, each is a machine integer when compiled.
        self._words: tuple[int, ...] = ()
        self._offset = 8

    def _next_words(self) -> tuple[int, int]:
        """The high and low halves of the next 64-bit integer."""
        if self._offset >= 8:
            digest = hashlib.sha256(self._seed + self._block.to_bytes(8, "big")).digest()
            self._words = struct.unpack(">8I", digest)
            self._block += 1
            self._offset = 0
        offset = self._offset
        self._offset = offset + 2
        words = self._words
        return words[offset], words[offset + 1]

    def next_u64(self) -> int:
        high, low = self._next_words()
        return high << 32 | low

    def uniform(self, m: int) -> int:
        """An integer in 0..m-1 without modulo bias."""
        if m <= 0:
            raise ValueError("uniform() needs a positive bound")
        if m >= _SMALL_BOUND:
            limit = _TWO_64 - (_TWO_64 % m)
            value = self.next_u64()
            while value >= limit:
                value = self.next_u64()
            return value % m
        # The same draw for a small bound, on the two 32-bit halves (value = high * 2^32 + low), so that no
        # step needs more than 62 bits: a value is refused when it is at least 2^64 - (2^64 mod m), which is
        # when high is all ones and low at least 2^32 - (2^64 mod m).
        word_remainder = _TWO_32 % m
        remainder = word_remainder * word_remainder % m
        high, low = self._next_words()
        while remainder and high == _WORD_MAX and low >= _TWO_32 - remainder:
            high, low = self._next_words()
        return (high % m * word_remainder + low) % m


def shuffle(seed: bytes) -> list[str]:
    """The deck shuffled from `seed`; its first card is the top of the stock."""
    if NATIVE_SHUFFLE is not None:
        deck = NATIVE_SHUFFLE(seed, DECK)
        if deck is not None:
            return deck
    return python_shuffle(seed)


def python_shuffle(seed: bytes) -> list[str]:
    """shuffle as Python makes it, where the C extension is not built (and to test it against)."""
    deck = list(DECK)
    stream = SeededStream(seed)
    for i in range(len(deck) - 1, 0, -1):
        j = stream.uniform(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


# The shuffle in C (_native.c, with its own SHA-256), built beside the compiled engine: the same deck from
# every seed (tests/engine/test_native.py, and a deal checked here at import); it answers None for a seed
# that is not plain bytes, which python_shuffle deals. The pure-Python build never loads it, and where it was
# not built python_shuffle deals in both builds.
NativeShuffle = Callable[[bytes, tuple[str, ...]], list[str] | None]


def _native_shuffle() -> NativeShuffle | None:
    if not COMPILED:
        return None
    try:
        from games.engine import _native
    except ImportError:
        return None
    probe = hashlib.sha256(b"kingscorner native shuffle").digest()
    if _native.shuffle(probe, DECK) != python_shuffle(probe):
        raise ImportError("games/engine/_native.c shuffles otherwise than deal.py: rebuild it")
    return _native.shuffle


NATIVE_SHUFFLE: Final = _native_shuffle()


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
