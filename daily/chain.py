"""The reverse hash chain of a season's daily seeds (docs/rules.md, "The daily seed"): pure functions of the
server's secret, the season's first day and its length, without Django, so that they read as the rules say.

The last day's seed is HMAC-SHA256(secret, "kingscorner-season:" + first day); each earlier day's seed is
SHA-256("kingscorner-chain:" ‖ the next day's seed); the anchor is SHA-256(the first day's seed). A day's seed
hashed forward, once per day back to the first, and once more, gives the anchor; nothing of a later day."""

import hashlib
import hmac
from datetime import date

SEASON_PREFIX = b"kingscorner-season:"
CHAIN_PREFIX = b"kingscorner-chain:"


def season_last_seed(secret: bytes | str, season_start: date) -> bytes:
    """The seed of a season's last day: HMAC-SHA256(secret, "kingscorner-season:YYYY-MM-DD")."""
    key = secret.encode() if isinstance(secret, str) else secret
    return hmac.new(key, SEASON_PREFIX + season_start.isoformat().encode(), hashlib.sha256).digest()


def previous_seed(seed: bytes) -> bytes:
    """The seed of the day before: SHA-256("kingscorner-chain:" ‖ seed)."""
    return hashlib.sha256(CHAIN_PREFIX + seed).digest()


def season_seeds(secret: bytes | str, season_start: date, days: int) -> tuple[bytes, ...]:
    """Every seed of a season, its first day's first."""
    if days < 1:
        raise ValueError("a season has at least one day")
    seeds = [season_last_seed(secret, season_start)]
    for _ in range(days - 1):
        seeds.append(previous_seed(seeds[-1]))
    seeds.reverse()
    return tuple(seeds)


def anchor_of(first_seed: bytes) -> bytes:
    """The season's anchor: SHA-256 of its first day's seed."""
    return hashlib.sha256(first_seed).digest()


def anchor_from(seed: bytes, index: int) -> bytes:
    """The anchor that the seed of the season's day `index` (0 for its first day) hashes forward to."""
    for _ in range(index):
        seed = previous_seed(seed)
    return anchor_of(seed)
