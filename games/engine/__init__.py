"""The Kings in the Corner rules engine: pure Python, no Django, every rule of RULES.md."""

from games.engine.cards import (
    DECK,
    fits,
    hand_penalty,
    is_king,
    is_red,
    parse_card,
    penalty,
    rank,
    sorted_cards,
)
from games.engine.deal import SeededStream, commitment, daily_seed, hand_seed, shuffle
from games.engine.errors import CardError, EngineError, MoveError, RulesError
from games.engine.game import (
    apply,
    can_play_a_card,
    daily_result,
    hand_penalties,
    legal_moves,
    move_pile_refusal,
    new_game,
    next_hand,
    play_refusal,
    position_moves,
    step,
)
from games.engine.moves import CORNERS, END_TURN, PILES, SIDES, EndTurn, Move, MovePile, Play, parse_move
from games.engine.observe import observe, observe_event
from games.engine.rules import OPTIONS, PRESETS, Rules, make_rules
from games.engine.state import DERIVED, DIRECT, FINISHED, HAND_OVER, PLAYING, State

__all__ = [
    "CORNERS", "DECK", "DERIVED", "DIRECT", "END_TURN", "FINISHED", "HAND_OVER", "OPTIONS", "PILES",
    "PLAYING", "PRESETS", "SIDES", "CardError", "EndTurn", "EngineError", "Move", "MoveError", "MovePile",
    "Play", "Rules", "RulesError", "SeededStream", "State", "apply", "can_play_a_card", "commitment",
    "daily_result", "daily_seed", "fits", "hand_penalties", "hand_penalty", "hand_seed", "is_king", "is_red",
    "legal_moves", "make_rules", "move_pile_refusal", "new_game", "next_hand", "observe", "observe_event",
    "parse_card", "parse_move", "penalty", "play_refusal", "position_moves", "rank", "shuffle",
    "sorted_cards", "step",
]
