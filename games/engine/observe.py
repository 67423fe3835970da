"""What one seat may see: the only view of a game that ever leaves the engine."""

from games.engine.game import legal_moves
from games.engine.moves import PILES
from games.engine.shapes import Event, Observation
from games.engine.state import PLAYING, State


def observe(state: State, seat: int) -> Observation:
    """The observation of `seat`: its own hand, the table, the stock's size, every hand's size and the scores.
    Never another hand in play, the stock's order or the seed."""
    if not 0 <= seat < state.players:
        raise ValueError(f"no seat {seat} in a game of {state.players}")
    your_turn = state.status == PLAYING and state.current_seat == seat
    return {
        "seat": seat,
        "players": state.players,
        "rules": state.rules.to_json(),
        "target_score": state.target_score,
        "status": state.status,
        "hand_number": state.hand_number,
        "dealer": state.dealer,
        "current_seat": state.current_seat if state.status == PLAYING else None,
        "turn": state.turn,
        "hand": list(state.hands[seat]),
        "hand_counts": [len(hand) for hand in state.hands],
        "stock": len(state.stock),
        "piles": {name: list(state.piles[name]) for name in PILES},
        "scores": list(state.scores),
        "turns_taken": list(state.turns_taken),
        "played_this_turn": state.played_this_turn if your_turn else 0,
        "idle_turns": state.idle_turns,
        "legal_moves": [move.to_json() for move in legal_moves(state)] if your_turn else [],
        "hand_results": [result.copy() for result in state.hand_results],
        "winners": None if state.winners is None else list(state.winners),
    }


def observe_event(event: Event, seat: int) -> Event:
    """An event as `seat` may see it: another seat's draw does not name the card."""
    seen = event.copy()
    if seen["type"] == "draw" and seen["seat"] != seat:
        seen.pop("card", None)
    return seen
