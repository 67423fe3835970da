"""A computer turn's records and its two hot steps, compiled with the engine (levels.py, which dispatches
the turn, stays interpreted): easy's whole decision in C, and the turn's moves played one by one through
`step`."""

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from games.engine import game
from games.engine.game import step
from games.engine.moves import END_TURN, Move
from games.engine.players.montecarlo import Budget
from games.engine.shapes import Event
from games.engine.state import PLAYING, State


# Plain records, not frozen: nothing changes them once made, and a frozen dataclass's construction runs a
# __setattr__ for each field.
@dataclass(slots=True)
class Decision:
    """One computer turn: its moves, and for sharp how many positions it searched, whether the node budget
    cut the search short, how many play-outs it ran, and whether the wall-clock cutoff fired."""

    moves: list[Move]
    nodes: int = 0
    budget_reached: bool = False
    play_outs: int = 0
    cut_off: bool = False


@dataclass(slots=True)
class TurnStep:
    """One move of a computer seat's turn: the seat, the move, the events it caused and the state after it."""

    seat: int
    move: Move
    events: list[Event]
    state: State


# Easy's whole turn in C (_native.c, beside the legal moves), built with the compiled engine: the moves that
# levels.decide() makes of the seat's observation and the turn's stream (levels.turn_stream), read from what
# that observation holds of them (the seat's own hand, the piles and the rules) and nothing else
# (tests/engine/test_native_easy.py compares the two on every position of many hands). It answers None for
# what is not plain data, which decide() plays. The pure-Python build never loads it.
NativeEasyTurn = Callable[
    [bytes, int, int, int, list[str], dict[str, list[str]], int, int, bool], tuple[list[Move], bool] | None
]


def _native_easy_turn() -> NativeEasyTurn | None:
    if game.NATIVE_POSITION_MOVES is None:
        return None
    from games.engine import _native

    # A module built before easy's turn was added to it (never an installed wheel) has none.
    native: NativeEasyTurn | None = getattr(_native, "easy_turn", None)
    if native is None:
        raise ImportError("games/engine/_native.c has no easy_turn: rebuild it")
    return native


NATIVE_EASY_TURN: Final = _native_easy_turn()


def easy_native(state: State, seat: int, game_seed: bytes) -> Decision | None:
    """Easy's turn for `seat` (whose turn it is) from the C, or None where it is not built or declined."""
    native = NATIVE_EASY_TURN
    if native is None:
        return None
    rules = state.rules
    side_cards, corner_cards = game._space_cards(rules)
    played = native(
        game_seed,
        state.hand_number,
        seat,
        state.turn,
        state.hands[seat],
        state.piles,
        side_cards,
        corner_cards,
        rules.king_pile_to_corner,
    )
    if played is None:
        return None
    moves, holding = played
    if holding:
        moves.append(END_TURN)
    return Decision(moves)


def turn_steps(state: State, seat: int, moves: list[Move]) -> Iterator[TurnStep]:
    """The turn's moves one by one through the engine's `step`, which refuses an illegal one."""
    for move in moves:
        state, events = step(state, move, seat=seat)
        yield TurnStep(seat, move, events, state)


class ComputerTurn(Protocol):
    """levels.computer_turn, which the loop below is given (levels.py stays interpreted, so that what it
    calls can be replaced)."""

    def __call__(
        self, state: State, level: str, game_seed: bytes, hand_events: list[Event] | None, *, budget: Budget
    ) -> tuple[Decision, Iterator[TurnStep]]: ...


def turn_loop(
    computer_turn: ComputerTurn,
    state: State,
    levels: Mapping[int, str],
    game_seed: bytes,
    hand_events: list[Event] | None,
    budget: Budget,
    turns: int | None,
    decided: Callable[[int, Decision], None] | None,
) -> Iterator[TurnStep]:
    """levels.computer_steps's loop, compiled: each turn through `computer_turn`."""
    played_turns = 0
    while state.status == PLAYING and state.current_seat in levels:
        if turns is not None and played_turns == turns:
            return
        played_turns += 1
        seat = state.current_seat
        decision, steps = computer_turn(state, levels[seat], game_seed, hand_events, budget=budget)
        if decided is not None:
            decided(seat, decision)
        for played in steps:
            state = played.state
            if hand_events is not None:
                hand_events.extend(played.events)
            yield played


def one_turn(
    computer_turn: ComputerTurn,
    state: State,
    level: str,
    game_seed: bytes,
    hand_events: list[Event] | None,
    budget: Budget,
) -> tuple[State, list[Event]]:
    """levels.play_turn's turn, compiled: the loop above for the seat to play, one turn, played out."""
    played: list[Event] = []
    for turn_step in turn_loop(
        computer_turn, state, {state.current_seat: level}, game_seed, hand_events, budget, 1, None
    ):
        state = turn_step.state
        played.extend(turn_step.events)
    return state, played
