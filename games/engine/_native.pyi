# The legal moves, the shuffle and easy's turn in C (_native.c), as game.py, deal.py and players/turns.py
# call them.
from collections.abc import Sequence
from typing import Literal

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
def easy_turn(
    game_seed: bytes,
    hand_number: int,
    seat: int,
    turn: int,
    hand: list[str],
    piles: dict[str, list[str]],
    side_cards: int,
    corner_cards: int,
    king_pile_to_corner: bool,
    /,
) -> tuple[list[Move], bool] | None: ...
def sha_blocks(extensions: bool, /) -> Literal["sha_ni", "portable"]: ...
