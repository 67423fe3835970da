# The legal moves and the shuffle in C (_native.c), as game.py and deal.py call them.
from collections.abc import Sequence

from games.engine.moves import Move, MovePile, Play

def position_moves(
    hand: Sequence[str],
    piles: dict[str, list[str]],
    side_cards: int,
    corner_cards: int,
    king_pile_to_corner: bool,
    /,
) -> list[Move] | None: ...
def bind(
    play_of_code: tuple[Play, ...], pile_move_of_code: tuple[MovePile, ...], piles: tuple[str, ...], /
) -> None: ...
def cards() -> tuple[str, ...]: ...
def shuffle(seed: bytes, deck: tuple[str, ...], /) -> list[str] | None: ...
