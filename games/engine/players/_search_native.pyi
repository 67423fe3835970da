# The C search (_search_native.c), as search.py calls it.
from typing import TypedDict

class _Constants(TypedDict):
    HELD_FOR_ME: float
    CHAIN_WEIGHTS: tuple[float, float, float]
    CLOCK_EVERY: int
    KINGS: int
    FITTERS: tuple[int, ...]
    TARGETS: tuple[int, ...]

def search(
    hand: int,
    piles: tuple[int, int, int, int, int, int, int, int],
    unseen: int,
    side_cards: int,
    corner_cards: int,
    king_pile_to_corner: bool,
    gift_cost: float,
    node_budget: int,
    keep: int,
    deadline_ns: int | None,
    /,
) -> tuple[tuple[tuple[float, tuple[tuple[int, int, int], ...]], ...], int, bool, bool]: ...
def constants() -> _Constants: ...
