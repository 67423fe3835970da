"""examples/verify_daily.py's own rules checker and `normal` player against the engine, on 1,000 seeded
hands under every rule set and some single options, 2 to 4 players: at every position both list the same
legal plays and pile moves, every move causes the same events, each computer turn is the one both `normal`s
choose, and the verifier replays each whole log, as the player in seat 0 sees it, without a mismatch."""

import hashlib
import random

from games.engine import (
    DIRECT,
    END_TURN,
    PLAYING,
    Move,
    MovePile,
    Play,
    State,
    legal_moves,
    make_rules,
    new_game,
    observe_event,
    step,
)
from games.engine.players import computer_turn
from tests.support.verifier import verifier

HANDS = 1000
RULES = [
    "classic",
    "casual",
    "any_space",
    {"preset": "classic", "draw": "until_playable"},
    {"preset": "classic", "draw_timing": "end"},
    {"preset": "casual", "draw_timing": "end", "blocked_scoring": "fewest_exempt"},
]


def _move(move: Move) -> tuple[str, ...]:
    if isinstance(move, Play):
        return "play", move.card, str(move.to)
    if isinstance(move, MovePile):
        return "move_pile", move.source, move.to
    return ("end_turn",)


def _person_turn(state: State, chance: random.Random) -> list[Move]:
    """Seat 0's turn: random legal moves, each after a coin that may end the turn first."""
    moves: list[Move] = []
    while state.status == PLAYING:
        open_moves = [move for move in legal_moves(state) if move != END_TURN]
        if not open_moves or chance.random() < 0.25:
            moves.append(END_TURN)
            return moves
        move = chance.choice(open_moves)
        moves.append(move)
        state, _ = step(state, move)
    return moves


def _play_and_compare(number: int) -> tuple[int, int]:
    """Plays hand `number` through the engine and the verifier's Hand side by side; returns how many
    positions and computer turns were compared."""
    module = verifier()
    seed = hashlib.sha256(b"verifier-differential" + number.to_bytes(4, "big")).digest()
    spec = RULES[number % len(RULES)]
    players = 2 + number % 3
    rules = make_rules(spec)
    state, events = new_game(rules=rules, players=players, seed=seed, target_score=None, seed_scheme=DIRECT)
    mine = module.Hand.deal(seed, module.Rules.of(rules.to_json()), players)
    assert mine.take_events() == events
    log = list(events)
    chance = random.Random(number)
    positions = computer_turns = 0
    while state.status == PLAYING:
        seat = state.current_seat
        if seat == 0:
            turn = _person_turn(state, chance)
        else:
            decision, _ = computer_turn(state, "normal", seed)
            turn = decision.moves
            view = state.hands[seat]
            stream = module.computer_stream(seed, 1, seat, state.turn)
            assert module.normal_turn(mine.rules, view, mine.piles, stream) == [_move(m) for m in turn], (
                number
            )
            computer_turns += 1
        for move in turn:
            engine_legal = {_move(m) for m in legal_moves(state) if m != END_TURN}
            assert mine.legal_moves() == engine_legal, (number, state.to_json())
            positions += 1
            state, events = step(state, move)
            assert mine.apply(_move(move)) == events, (number, move)
            log.extend(events)
    seen = [{"seq": seq, **observe_event(event, 0)} for seq, event in enumerate(log, 1)]
    done = module.replay(seed, module.Rules.of(rules.to_json()), ["normal"] * (players - 1), seen)
    assert done.hand.over and done.hand.turns_taken == state.turns_taken
    assert done.checked.get("computer moves checked", 0) >= computer_turns
    return positions, computer_turns


def test_the_verifiers_rules_checker_and_normal_agree_with_the_engine_on_a_thousand_hands() -> None:
    positions = computer_turns = 0
    for number in range(HANDS):
        compared = _play_and_compare(number)
        positions += compared[0]
        computer_turns += compared[1]
    assert positions > 30 * HANDS and computer_turns > 5 * HANDS
