"""Cards as bits: a card is an index 0..51 in the order of `sort_key` (rank, then suit), so that a set of
cards is a 52-bit mask whose bits read low to high in the order players hold their cards. The rules engine
lists legal moves from these masks, and the computer players (players/table.py) play on them."""

from typing import TYPE_CHECKING, Final

from games.engine.build import BUILD
from games.engine.cards import DECK, RANKS, SUITS, sort_key

if TYPE_CHECKING:
    # Compiled, a variable annotated i64 is a C int64_t; as pure Python, local annotations are never
    # evaluated, so the engine needs no mypy_extensions at run time.
    from mypy_extensions import i64

CARDS: Final[tuple[str, ...]] = tuple(sorted(DECK, key=sort_key))
CARD_INDEX: Final[dict[str, int]] = {card: index for index, card in enumerate(CARDS)}
ALL_CARDS: Final = (1 << len(CARDS)) - 1
KINGS: Final = sum(1 << CARD_INDEX["K" + suit] for suit in SUITS)
NOT_KINGS: Final = ALL_CARDS & ~KINGS


def _rank_of(index: int) -> int:
    return RANKS.index(CARDS[index][0]) + 1


def _is_red(index: int) -> bool:
    return CARDS[index][1] in "DH"


# FITTERS[top]: the mask of the two cards that build on `top` (none on an Ace).
FITTERS: Final[tuple[int, ...]] = tuple(
    sum(
        1 << card
        for card in range(len(CARDS))
        if _rank_of(card) + 1 == _rank_of(top) and _is_red(card) != _is_red(top)
    )
    for top in range(len(CARDS))
)


# TARGETS[card]: the mask of the two cards that `card` builds on (none for a King).
TARGETS: Final[tuple[int, ...]] = tuple(
    sum(1 << top for top in range(len(CARDS)) if FITTERS[top] >> card & 1) for card in range(len(CARDS))
)

# Each rank is a nibble of four suits, C D H S: C and S black, D and H red.
_NIBBLES: Final = sum(1 << (4 * rank) for rank in range(len(RANKS)))
_BLACK: Final = _NIBBLES * 0b1001
_RED: Final = _NIBBLES * 0b0110


# A rank mask (one bit per rank, at the bottom of its nibble) spread to the red suits is `ranks * 0b0110`,
# to the black ones `ranks * 0b1001`; the bits of a nibble never carry into the next, so these are shifts and
# ors, which compiled stay machine arithmetic (a product of 52-bit integers goes through Python's long type).


# Whether this module runs compiled (build.py never loads the engine half one build, half the other). A few
# primitives take the way that is fastest in the build that runs: compiled, machine arithmetic rather than a
# method call on a boxed integer; as pure Python, the builtin method rather than a dozen interpreted steps.
COMPILED: Final = BUILD == "mypyc"

# Every other bit, pair of bits and nibble below bit 62 (compiled, integers below 2^62 are machine words).
_PAIRS: Final = 0x1555555555555555
_QUADS: Final = 0x3333333333333333
_BYTES: Final = 0x0F0F0F0F0F0F0F0F


def _bit_count(mask: int) -> int:
    # Apart from card_count, which stays small enough for the C compiler to inline into its callers.
    return mask.bit_count()


def card_count(mask: int) -> int:
    """How many cards `mask` holds: `mask.bit_count()`, which compiled is a method call on the integer boxed
    as a Python object, here the sum of its bits in parallel by shifts and adds on a 64-bit machine integer
    (for masks of 0 up to 2^62)."""
    if not COMPILED:
        return _bit_count(mask)
    word: i64 = mask
    word -= word >> 1 & _PAIRS
    word = (word & _QUADS) + (word >> 2 & _QUADS)
    word = (word + (word >> 4)) & _BYTES
    word += word >> 8
    word += word >> 16
    word += word >> 32
    return word & 0x7F


def builds_on(mask: int) -> int:
    """The cards that build on any card of `mask`: the union of FITTERS over it, with a few shifts (on a
    64-bit machine integer, as in card_count)."""
    cards: i64 = mask
    black_ranks = ((cards & _BLACK) | (cards & _BLACK) >> 3) & _NIBBLES
    red_ranks = ((cards & _RED) >> 1 | (cards & _RED) >> 2) & _NIBBLES
    return (black_ranks << 1 | black_ranks << 2 | red_ranks | red_ranks << 3) >> 4


def built_on(mask: int) -> int:
    """The cards that any card of `mask` builds on: the union of TARGETS over it, with a few shifts."""
    cards: i64 = mask
    black_ranks = ((cards & _BLACK) | (cards & _BLACK) >> 3) & _NIBBLES
    red_ranks = ((cards & _RED) >> 1 | (cards & _RED) >> 2) & _NIBBLES
    return ((black_ranks << 1 | black_ranks << 2 | red_ranks | red_ranks << 3) << 4) & ALL_CARDS
