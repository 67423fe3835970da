"""Computer players Millie, Roy and Bess, easy, normal or sharp, each seeing only its own seat."""

from games.engine.players.levels import (
    DEFAULT_BUDGET,
    LEVELS,
    NAMES,
    best_spot,
    best_turn,
    choose_turn,
    computer_steps,
    computer_turn,
    decide,
    play_turn,
    turn_stream,
)
from games.engine.players.montecarlo import Budget
from games.engine.players.search import DEFAULT_NODE_BUDGET, threat_of
from games.engine.players.turns import Decision, TurnStep

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_NODE_BUDGET",
    "LEVELS",
    "NAMES",
    "Budget",
    "Decision",
    "best_spot",
    "best_turn",
    "TurnStep",
    "choose_turn",
    "computer_steps",
    "computer_turn",
    "decide",
    "play_turn",
    "threat_of",
    "turn_stream",
]
