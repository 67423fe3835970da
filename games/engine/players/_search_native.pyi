# The C search (_search_native.c), as search.py calls it.
from collections.abc import Callable
from typing import TypedDict

class _Constants(TypedDict):
    HELD_FOR_ME: float
    CHAIN_WEIGHTS: tuple[float, float, float]
    CLOCK_EVERY: int
    KINGS: int
    FITTERS: tuple[int, ...]
    TARGETS: tuple[int, ...]
    GIFT_COST: float
    MAX_PLAY_OUT_TURNS: int

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
def play_out(
    seat: int,
    players: int,
    side_cards: int,
    corner_cards: int,
    king_pile_to_corner: bool,
    draw_at_end: bool,
    draw_until_playable: bool,
    blocked_everyone_scores: bool,
    hands: list[int],
    stock: list[int],
    piles: tuple[int, int, int, int, int, int, int, int],
    on_table: int,
    played: bool,
    idle_turns: int,
    values: list[float],
    random: Callable[[], float],
    next: int,
    node_budget: int,
    /,
) -> tuple[float, int, int]: ...
def constants() -> _Constants: ...
