"""The three computer levels, and how a computer player's turn is chosen from what its seat sees alone."""

import hashlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

from games.engine.deal import SeededStream
from games.engine.masks import ALL_CARDS, CARD_INDEX
from games.engine.moves import PILES, Move
from games.engine.observe import observe, observe_event
from games.engine.players.easy import easy_turn
from games.engine.players.inference import HandKnowledge, infer
from games.engine.players.montecarlo import DEFAULT_CUTOFF_MS, Budget, Position, choose
from games.engine.players.normal import normal_turn
from games.engine.players.rollout import Table
from games.engine.players.search import DEFAULT_NODE_BUDGET, DEFAULT_THREAT, Score, search, threat_of
from games.engine.players.table import (
    PLAY,
    Piles,
    TableMove,
    TableRules,
    apply_move,
    cards_mask,
    engine_turn,
    table_cards,
    table_moves,
    table_piles,
)
from games.engine.players.turns import Decision, TurnStep, easy_native, one_turn, turn_loop, turn_steps
from games.engine.rules import Rules
from games.engine.shapes import Event, Observation
from games.engine.state import PLAYING, State

LEVELS = ("easy", "normal", "sharp")
NAMES = ("Millie", "Roy", "Bess")

DEFAULT_BUDGET = Budget()


def turn_stream(game_seed: bytes, hand_number: int, seat: int, turn: int) -> SeededStream:
    """The random stream of one computer turn, so that a game replays exactly from its seed."""
    material = game_seed + b"players" + hand_number.to_bytes(4, "big") + seat.to_bytes(1, "big")
    return SeededStream(hashlib.sha256(material + turn.to_bytes(4, "big")).digest())


def _finish(moves: list[TableMove], hand: int) -> list[Move]:
    return engine_turn(moves, hand)


def _deadline(cutoff_ms: float) -> int:
    return time.perf_counter_ns() + int(cutoff_ms * 1e6)


def _sharp_in_game(
    observation: Observation,
    stream: SeededStream,
    history: Sequence[Event] | None,
    budget: Budget,
    deadline_ns: int | None,
) -> Decision:
    rules = Rules.from_json(observation["rules"])
    table_rules = TableRules.of(rules)
    seat, players = observation["seat"], observation["players"]
    hand = cards_mask(observation["hand"])
    on_table = table_cards(observation["piles"])
    table = Table(
        rules=table_rules,
        players=players,
        seat=seat,
        draw_at_end=rules.draw_timing == "end",
        draw_until_playable=rules.draw == "until_playable",
        blocked_everyone_scores=rules.blocked_scoring == "everyone",
    )
    position = Position(
        hand=hand,
        piles=table_piles(observation["piles"]),
        on_table=on_table,
        unseen=ALL_CARDS & ~hand & ~on_table,
        hand_counts=tuple(observation["hand_counts"]),
        stock=observation["stock"],
        played_this_turn=observation["played_this_turn"] > 0,
        idle_turns=observation["idle_turns"],
        threat=threat_of(observation["hand_counts"], seat),
    )
    knowledge = (
        HandKnowledge.nothing(players)
        if history is None
        else infer(table_rules, players, table.draw_at_end, history)
    )
    choice = choose(table, position, knowledge, stream, budget, deadline_ns)
    end_hand = hand
    piles = position.piles
    for move in choice.moves:
        end_hand, piles = apply_move(end_hand, piles, move)
    return Decision(
        _finish(list(choice.moves), end_hand),
        choice.search.nodes,
        choice.search.budget_reached,
        choice.play_outs,
        choice.cut_off,
    )


def decide(
    observation: Observation,
    level: str,
    stream: SeededStream,
    *,
    history: Sequence[Event] | None = None,
    budget: Budget = DEFAULT_BUDGET,
    deadline_ns: int | None = None,
) -> Decision:
    """The turn `level` plays from `observation` (its own seat's, after its draw), with the search figures.
    `history` is the hand's public events as this seat saw them (`observe_event`); sharp reads from it which
    cards the others cannot hold. Without it, sharp samples the unseen cards knowing nothing of the others.
    Sharp's wall-clock cutoff falls at `deadline_ns` (a `time.perf_counter_ns()` value) when given, else
    `budget.cutoff_ms` from now."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; the levels are {', '.join(LEVELS)}")
    if observation["current_seat"] != observation["seat"]:
        raise ValueError("a computer player chooses only on its own turn")
    if level == "sharp":
        return _sharp_in_game(observation, stream, history, budget, deadline_ns)
    rules = TableRules.of(Rules.from_json(observation["rules"]))
    hand = cards_mask(observation["hand"])
    piles = table_piles(observation["piles"])
    if level == "easy":
        moves, left = easy_turn(rules, hand, piles, stream)
    else:
        moves, left = normal_turn(rules, hand, piles, stream)
    return Decision(engine_turn(moves, left))


def choose_turn(
    observation: Observation, level: str, stream: SeededStream, history: Sequence[Event] | None = None
) -> list[Move]:
    """The moves of a whole computer turn, ending with END_TURN unless the last play empties the hand. Only
    the observation of the seat whose turn it is, the public events it saw and the turn's stream are used."""
    return decide(observation, level, stream, history=history).moves


def _position(
    rules: Rules, hand: Sequence[str], piles: dict[str, list[str]], unseen: Sequence[str] | None
) -> tuple[TableRules, int, Piles, int]:
    hand_mask = cards_mask(hand)
    on_table = table_cards(piles)
    if hand_mask & on_table:
        raise ValueError("a card cannot be both in hand and on the table")
    unseen_mask = ALL_CARDS & ~hand_mask & ~on_table if unseen is None else cards_mask(unseen)
    return TableRules.of(rules), hand_mask, table_piles(piles), unseen_mask


def best_turn(
    rules: Rules,
    hand: list[str],
    piles: dict[str, list[str]],
    unseen: list[str] | None = None,
    *,
    threat: float = DEFAULT_THREAT,
    node_budget: int = DEFAULT_NODE_BUDGET,
    cutoff_ms: float = DEFAULT_CUTOFF_MS,
) -> list[Move]:
    """Sharp's search's moves for the rest of a turn from any position, ending with END_TURN unless they go
    out: the end position its search ranks best, without the sampling of a game, as a position alone has no
    history and no seeded stream. `unseen` (the cards the player cannot see) defaults to every card neither
    in hand nor on the table; `threat` is `threat_of` the hand sizes when they are known, as sharp reads it
    in a game. Past `cutoff_ms` the search plays the best end position found so far."""
    table_rules, hand_mask, table, unseen_mask = _position(rules, hand, piles, unseen)
    result = search(
        table_rules,
        hand_mask,
        table,
        unseen_mask,
        threat=threat,
        node_budget=node_budget,
        deadline_ns=_deadline(cutoff_ms),
    )
    for move in result.moves:
        hand_mask, table = apply_move(hand_mask, table, move)
    return _finish(list(result.moves), hand_mask)


def best_spot(
    rules: Rules,
    hand: list[str],
    piles: dict[str, list[str]],
    card: str,
    unseen: list[str] | None = None,
    *,
    threat: float = DEFAULT_THREAT,
    cutoff_ms: float = DEFAULT_CUTOFF_MS,
) -> str | None:
    """The pile sharp would play `card` on now, or None when it fits nowhere: where sharp's best turn plays
    it first, if that pile takes it now; otherwise the legal pile from which sharp's search scores best.
    `unseen` and `threat` are read as by `best_turn`; every search shares one `cutoff_ms`."""
    deadline = _deadline(cutoff_ms)
    table_rules, hand_mask, table, unseen_mask = _position(rules, hand, piles, unseen)
    if not hand_mask & cards_mask([card]):
        raise ValueError(f"{card} is not in the hand")
    index = CARD_INDEX[card]
    moves = table_moves(table_rules, hand_mask, table)
    legal = [move for move in moves if move[0] == PLAY and move[1] == index]
    if not legal:
        return None
    result = search(table_rules, hand_mask, table, unseen_mask, threat=threat, deadline_ns=deadline)
    legal_piles = {move[2] for move in legal}
    for kind, played, pile in result.moves:
        if kind == PLAY and played == index:
            if pile in legal_piles:
                return PILES[pile]
            break
    best_pile, best_score = legal[0][2], None
    for move in legal:
        child_hand, child_table = apply_move(hand_mask, table, move)
        score: Score = search(
            table_rules, child_hand, child_table, unseen_mask, threat=threat, deadline_ns=deadline
        ).score
        if best_score is None or score > best_score:
            best_pile, best_score = move[2], score
    return PILES[best_pile]


def computer_turn(
    state: State,
    level: str,
    game_seed: bytes,
    hand_events: Sequence[Event] | None = None,
    *,
    budget: Budget = DEFAULT_BUDGET,
) -> tuple[Decision, Iterator[TurnStep]]:
    """The current seat's whole turn at `level`, the one way a computer seat plays, in a game served by the
    API, in the simulator and in par's replays alike: the decision, made from the seat's own observation, the
    turn's seeded stream and (when given) the hand's events as its seat may see them; then its moves, one by
    one through the engine's `step`, which refuses an illegal one."""
    if state.status != PLAYING:
        raise ValueError("no turn to play: the hand is over")
    seat = state.current_seat
    # Sharp's cutoff counts from here, so that reading the seat's view of the hand is within it too.
    deadline_ns = _deadline(budget.cutoff_ms) if level == "sharp" else None
    # Only sharp reads what the others' past moves say of their hands.
    history = None
    if hand_events is not None and level == "sharp":
        history = [observe_event(event, seat) for event in hand_events]
    decision = easy_native(state, seat, game_seed) if level == "easy" else None
    if decision is None:
        stream = turn_stream(game_seed, state.hand_number, seat, state.turn)
        decision = decide(
            observe(state, seat), level, stream, history=history, budget=budget, deadline_ns=deadline_ns
        )

    return decision, turn_steps(state, seat, decision.moves)


def computer_steps(
    state: State,
    levels: Mapping[int, str],
    game_seed: bytes,
    hand_events: list[Event] | None = None,
    *,
    budget: Budget = DEFAULT_BUDGET,
    turns: int | None = None,
    decided: Callable[[int, Decision], None] | None = None,
) -> Iterator[TurnStep]:
    """The one computer-turn loop: plays the seats `levels` names (seat -> level), turn after turn, each
    through computer_turn, until a seat it does not name is to play, the hand is over, or (when given) `turns`
    turns were played. `hand_events`, when given, is the hand's events so far; it grows with every move and
    each seat reads it as its seat may see it. `decided` is told each turn's seat and decision once it is
    made, before its moves are played (the simulator times and tallies the decisions)."""
    # The loop is compiled (players/turns.py); each turn is this module's computer_turn.
    return turn_loop(computer_turn, state, levels, game_seed, hand_events, budget, turns, decided)


def play_turn(
    state: State,
    level: str,
    game_seed: bytes,
    events: Sequence[Event] | None = None,
    *,
    budget: Budget = DEFAULT_BUDGET,
) -> tuple[State, list[Event]]:
    """The current seat's whole turn at `level` (computer_steps, one turn), played out: the state after it
    and the events it caused."""
    if state.status != PLAYING:
        raise ValueError("no turn to play: the hand is over")
    hand_events = None if events is None else list(events)
    return one_turn(computer_turn, state, level, game_seed, hand_events, budget)
