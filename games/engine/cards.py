"""Cards and their notation: canonical two-character codes, parsing, rank, colour and penalty."""

from collections.abc import Iterable
from typing import Final

from games.engine.errors import CardError

RANKS: Final = "A23456789TJQK"
SUITS: Final = "CDHS"
# The fixed starting order of the shuffle: suits C, D, H, S; ranks A..K within each suit.
DECK: Final[tuple[str, ...]] = tuple(rank + suit for suit in SUITS for rank in RANKS)

_RANK_VALUE: Final = {symbol: value for value, symbol in enumerate(RANKS, start=1)}
_SUIT_SYMBOLS: Final = {"♣": "C", "♦": "D", "♥": "H", "♠": "S", "♧": "C", "♢": "D", "♡": "H", "♤": "S"}
_VARIATION_SELECTORS: Final = ("\ufe0f", "\ufe0e")

# What `parse_card` accepts, as a regular expression that JSON Schema (ECMA-262) and Python read alike: a rank
# (either case, or 10) and a suit (either case, or a symbol), variation selectors anywhere, and the
# whitespace str.strip() removes around it.
_STRIPPED: Final = r"[\t\n\x0b\x0c\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*"
_SELECTORS: Final = "[" + "".join(f"\\u{ord(selector):04x}" for selector in _VARIATION_SELECTORS) + "]*"
_SUIT_CLASS: Final = "".join(f"\\u{ord(symbol):04x}" for symbol in _SUIT_SYMBOLS)
CARD_PATTERN: Final = (
    f"^{_STRIPPED}{_SELECTORS}(?:[{RANKS}{RANKS.lower()}]|1{_SELECTORS}0){_SELECTORS}"
    f"[{SUITS}{SUITS.lower()}{_SUIT_CLASS}]{_SELECTORS}{_STRIPPED}$"
)

KING_PENALTY: Final = 10
CARD_PENALTY: Final = 1


def rank(card: str) -> int:
    """1 for an Ace up to 13 for a King."""
    return _RANK_VALUE[card[0]]


def is_red(card: str) -> bool:
    return card[1] in "DH"


def is_king(card: str) -> bool:
    return card[0] == "K"


def fits(card: str, top: str) -> bool:
    """Whether `card` builds on `top`: exactly one rank lower and of the opposite colour."""
    return _RANK_VALUE[card[0]] + 1 == _RANK_VALUE[top[0]] and (card[1] in "DH") != (top[1] in "DH")


def penalty(card: str) -> int:
    return KING_PENALTY if card[0] == "K" else CARD_PENALTY


def hand_penalty(cards: Iterable[str]) -> int:
    return sum(penalty(card) for card in cards)


def sort_key(card: str) -> tuple[int, int]:
    """Orders a hand by rank, then suit, as players usually hold their cards."""
    return _RANK_VALUE[card[0]], SUITS.index(card[1])


def sorted_cards(cards: Iterable[str]) -> list[str]:
    return sorted(cards, key=sort_key)


def parse_card(text: object) -> str:
    """Reads a card code (`QD`, `10♦`, `th`) and returns its canonical form, or raises CardError."""
    if not isinstance(text, str):
        raise CardError(
            "invalid_card", f"A card is written as a string such as 'QD', not {type(text).__name__}."
        )
    cleaned = text.strip()
    for selector in _VARIATION_SELECTORS:
        cleaned = cleaned.replace(selector, "")
    if len(cleaned) < 2:
        raise CardError(
            "invalid_card", f"{text!r} is not a card: write a rank then a suit, such as 'QD' or '10♦'."
        )
    rank_part, suit_part = cleaned[:-1].upper(), cleaned[-1]
    # Only an ASCII suit letter is upper-cased: str.upper() turns the long s 'ſ' into 'S'.
    suit = _SUIT_SYMBOLS.get(suit_part, suit_part.upper() if suit_part.isascii() else suit_part)
    if rank_part == "10":
        rank_part = "T"
    if len(rank_part) != 1 or rank_part not in _RANK_VALUE:
        raise CardError(
            "invalid_card", f"{text!r} has no valid rank: ranks are A 2 3 4 5 6 7 8 9 T (or 10) J Q K."
        )
    if suit not in SUITS:
        raise CardError("invalid_card", f"{text!r} has no valid suit: suits are C D H S (or ♣ ♦ ♥ ♠).")
    return rank_part + suit
