"""The whole state of a game as plain data that serializes to JSON and back exactly."""

from dataclasses import dataclass, field
from typing import Any, cast

from games.engine.moves import PILES
from games.engine.rules import Rules
from games.engine.shapes import HandResult

PLAYING = "playing"
HAND_OVER = "hand_over"
FINISHED = "finished"

# How a hand's deck seed comes from the game seed: "derived" is SHA-256(g ‖ "hand" ‖ h) for every hand;
# "direct" shuffles the first hand from the seed itself (the daily deal) and derives later ones.
DERIVED = "derived"
DIRECT = "direct"


@dataclass(slots=True)
class State:
    rules: Rules
    players: int
    seed: str
    target_score: int | None
    seed_scheme: str = DERIVED
    hand_number: int = 0
    dealer: int = 0
    status: str = PLAYING
    scores: list[int] = field(default_factory=list)
    hands: list[list[str]] = field(default_factory=list)
    stock: list[str] = field(default_factory=list)
    piles: dict[str, list[str]] = field(default_factory=lambda: {name: [] for name in PILES})
    current_seat: int = 0
    turn: int = 0
    turns_taken: list[int] = field(default_factory=list)
    played_this_turn: int = 0
    idle_turns: int = 0
    # The last finished hand's result only (a list of at most one): the rules need the running totals in
    # `scores`, and the view the last hand's result. Every hand's result is in its hand_over event, which
    # the caller keeps; a state must not grow with the number of hands played.
    hand_results: list[HandResult] = field(default_factory=list)
    winners: list[int] | None = None

    def copy(self) -> "State":
        return State(
            rules=self.rules,
            players=self.players,
            seed=self.seed,
            target_score=self.target_score,
            seed_scheme=self.seed_scheme,
            hand_number=self.hand_number,
            dealer=self.dealer,
            status=self.status,
            scores=list(self.scores),
            hands=[list(hand) for hand in self.hands],
            stock=list(self.stock),
            piles={name: list(pile) for name, pile in self.piles.items()},
            current_seat=self.current_seat,
            turn=self.turn,
            turns_taken=list(self.turns_taken),
            played_this_turn=self.played_this_turn,
            idle_turns=self.idle_turns,
            hand_results=list(self.hand_results),
            winners=None if self.winners is None else list(self.winners),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_json(),
            "players": self.players,
            "seed": self.seed,
            "target_score": self.target_score,
            "seed_scheme": self.seed_scheme,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "status": self.status,
            "scores": list(self.scores),
            "hands": [list(hand) for hand in self.hands],
            "stock": list(self.stock),
            "piles": {name: list(self.piles[name]) for name in PILES},
            "current_seat": self.current_seat,
            "turn": self.turn,
            "turns_taken": list(self.turns_taken),
            "played_this_turn": self.played_this_turn,
            "idle_turns": self.idle_turns,
            "hand_results": [result.copy() for result in self.hand_results],
            "winners": None if self.winners is None else list(self.winners),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "State":
        return cls(
            rules=Rules.from_json(data["rules"]),
            players=data["players"],
            seed=data["seed"],
            target_score=data["target_score"],
            seed_scheme=data["seed_scheme"],
            hand_number=data["hand_number"],
            dealer=data["dealer"],
            status=data["status"],
            scores=list(data["scores"]),
            hands=[list(hand) for hand in data["hands"]],
            stock=list(data["stock"]),
            piles={name: list(data["piles"][name]) for name in PILES},
            current_seat=data["current_seat"],
            turn=data["turn"],
            turns_taken=list(data["turns_taken"]),
            played_this_turn=data["played_this_turn"],
            idle_turns=data["idle_turns"],
            hand_results=cast(list[HandResult], [dict(result) for result in data["hand_results"]]),
            winners=None if data["winners"] is None else list(data["winners"]),
        )
