"""The rules in motion: dealing, legal moves, applying a move, turns, the end of a hand and of a game."""

from collections.abc import Callable, Sequence
from typing import Final

from games.engine.cards import fits, hand_penalty, is_king, rank
from games.engine.deal import hand_seed, shuffle
from games.engine.errors import MoveError
from games.engine.masks import (
    ALL_CARDS,
    CARD_INDEX,
    CARDS,
    COMPILED,
    FITTERS,
    KINGS,
    NOT_KINGS,
    builds_on,
    built_on,
)
from games.engine.moves import (
    CORNERS,
    END_TURN,
    PILE_MOVE_OF_CODE,
    PILES,
    PLAY_OF_CODE,
    SIDES,
    EndTurn,
    Move,
    MovePile,
    Play,
)
from games.engine.rules import Rules
from games.engine.shapes import Event, HandOverEvent, HandResult
from games.engine.state import DERIVED, DIRECT, FINISHED, HAND_OVER, PLAYING, State

HAND_SIZE: Final = 7
MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 4

Refusal = tuple[str, str]


# --- the table, as any player sees it -----------------------------------------------------------------------


def _fit_refusal(card: str, top: str, what: str) -> Refusal | None:
    if fits(card, top):
        return None
    if rank(top) == 1:
        return "nothing_on_ace", f"Nothing builds on an Ace: {what} cannot go on {top}."
    return (
        "does_not_fit",
        f"{what} does not fit on {top}: it must be one rank lower and of the opposite colour.",
    )


def play_refusal(rules: Rules, piles: dict[str, list[str]], card: str, to: str) -> Refusal | None:
    """Why `card` cannot be played onto pile `to` (the card being in hand is checked elsewhere), or None."""
    pile = piles[to]
    if pile:
        return _fit_refusal(card, pile[-1], card)
    if to in CORNERS:
        if rules.empty_corner == "king" and not is_king(card):
            return "corner_needs_king", f"Only a King opens an empty corner; {card} cannot go into {to}."
    elif rules.empty_side == "no_king" and is_king(card):
        return "no_king_on_empty_side", f"A King cannot start an empty side pile; put {card} in a corner."
    return None


def move_pile_refusal(rules: Rules, piles: dict[str, list[str]], source: str, to: str) -> Refusal | None:
    """Why the side pile `source` cannot move onto pile `to`, or None."""
    if source in CORNERS:
        return "corner_pile_cannot_move", f"Corner piles never move; {source} is a corner."
    if source == to:
        return "same_pile", "A pile cannot move onto itself."
    moving = piles[source]
    if not moving:
        return "empty_pile", f"There is no pile at {source} to move."
    target = piles[to]
    if not target:
        if to in CORNERS and rules.king_pile_to_corner and is_king(moving[0]):
            return None
        return "no_pile_into_empty_space", f"A pile moves onto another pile, never into the empty space {to}."
    return _fit_refusal(moving[0], target[-1], f"The {source} pile (bottom card {moving[0]})")


def position_refusal(rules: Rules, piles: dict[str, list[str]]) -> Refusal | None:
    """Why no game under `rules` can have these piles (each from its bottom card), or None: every pile
    descends one rank at a time in alternating colours, and a pile's bottom card is one its space takes."""
    for name, pile in piles.items():
        for below, above in zip(pile, pile[1:], strict=False):
            if not fits(above, below):
                return "pile_out_of_sequence", f"In pile {name}, {above} cannot lie on {below}."
        if not pile:
            continue
        if name in CORNERS and rules.empty_corner == "king" and not is_king(pile[0]):
            return "corner_without_king", f"Corner {name} starts with {pile[0]}; under these rules, a King."
        if name in SIDES and rules.empty_side == "no_king" and is_king(pile[0]):
            return (
                "side_pile_starts_with_king",
                f"Side pile {name} starts with a King, which these rules forbid.",
            )
    return None


# legal_moves is the hot path: it tests legality on masks of cards (games/engine/masks.py) rather than through
# the refusal functions, which build a message for every refusal. A play is coded card * 8 + pile (the card's
# index in CARDS, the pile's in PILES), so that sorting the codes orders the plays by card, then pile; the
# moves are made once (moves.py) and shared.
_SIDE_COUNT: Final = len(SIDES)


def _space_cards(rules: Rules) -> tuple[int, int]:
    """The cards that may start an empty side, and an empty corner, as masks."""
    return (
        ALL_CARDS if rules.empty_side == "any" else NOT_KINGS,
        ALL_CARDS if rules.empty_corner == "any" else KINGS,
    )


def _hand_mask(hand: Sequence[str]) -> int:
    mask = 0
    for card in hand:
        mask |= 1 << CARD_INDEX[card]
    return mask


# The legal moves in C (_native.c), built beside the compiled engine: the same moves in the same order
# (tests/engine/test_native.py). It reads plain lists, tuples, dicts and strings only, and answers None for
# anything else (a subclass with its own __iter__ or __getitem__, a generator), which python_position_moves
# lists. The pure-Python build never loads it, and where it was not built python_position_moves lists every
# position in both builds.
NativePositionMoves = Callable[[Sequence[str], dict[str, list[str]], int, int, bool], list[Move] | None]


def _native_position_moves() -> NativePositionMoves | None:
    if not COMPILED:
        return None
    try:
        from games.engine import _native
    except ImportError:
        return None
    if _native.cards() != CARDS:
        raise ImportError("games/engine/_native.c reads the cards in another order: rebuild it")
    _native.bind(PLAY_OF_CODE, PILE_MOVE_OF_CODE, PILES)
    return _native.position_moves


NATIVE_POSITION_MOVES: Final = _native_position_moves()


def position_moves(rules: Rules, hand: Sequence[str], piles: dict[str, list[str]]) -> list[Move]:
    """Every play and pile move open in this position, in a fixed order: plays by card then pile, then
    pile moves by source then target. Agrees with play_refusal and move_pile_refusal."""
    if NATIVE_POSITION_MOVES is not None:
        side_cards, corner_cards = _space_cards(rules)
        moves = NATIVE_POSITION_MOVES(hand, piles, side_cards, corner_cards, rules.king_pile_to_corner)
        if moves is not None:
            return moves
    return python_position_moves(rules, hand, piles)


def python_position_moves(rules: Rules, hand: Sequence[str], piles: dict[str, list[str]]) -> list[Move]:
    """position_moves as Python lists them, where the C extension is not built (and to test it against)."""
    held = _hand_mask(hand)
    side_cards, corner_cards = _space_cards(rules)
    codes: list[int] = []
    # Each pile's top card, -1 for an empty pile, and the sides' bottom cards as a mask.
    tops: list[int] = []
    bottoms = 0
    empty_corners = 0
    index = 0
    for name in PILES:
        pile = piles[name]
        if pile:
            top = CARD_INDEX[pile[-1]]
            tops.append(top)
            fitting = FITTERS[top] & held
            if index < _SIDE_COUNT:
                bottoms |= 1 << CARD_INDEX[pile[0]]
        else:
            tops.append(-1)
            if index < _SIDE_COUNT:
                fitting = side_cards & held
            else:
                fitting = corner_cards & held
                empty_corners |= 1 << index
        while fitting:
            low = fitting & -fitting
            codes.append((low.bit_length() - 1) << 3 | index)
            fitting ^= low
        index += 1
    codes.sort()
    moves: list[Move] = [PLAY_OF_CODE[code] for code in codes]
    king_to_corner = rules.king_pile_to_corner and empty_corners != 0
    if not (built_on(bottoms) & _tops_mask(tops) or (king_to_corner and bottoms & KINGS)):
        return moves
    for source in range(_SIDE_COUNT):
        moving = piles[SIDES[source]]
        if not moving:
            continue
        bottom = CARD_INDEX[moving[0]]
        for target in range(len(PILES)):
            top = tops[target]
            if target == source:
                continue
            if top >= 0:
                if FITTERS[top] >> bottom & 1:
                    moves.append(PILE_MOVE_OF_CODE[source << 3 | target])
            elif king_to_corner and empty_corners >> target & 1 and KINGS >> bottom & 1:
                moves.append(PILE_MOVE_OF_CODE[source << 3 | target])
    return moves


def _tops_mask(tops: list[int]) -> int:
    mask = 0
    for top in tops:
        if top >= 0:
            mask |= 1 << top
    return mask


def can_play_a_card(rules: Rules, hand: Sequence[str], piles: dict[str, list[str]]) -> bool:
    side_cards, corner_cards = _space_cards(rules)
    tops = spaces = 0
    index = 0
    for name in PILES:
        pile = piles[name]
        if pile:
            tops |= 1 << CARD_INDEX[pile[-1]]
        else:
            spaces |= side_cards if index < _SIDE_COUNT else corner_cards
        index += 1
    return _hand_mask(hand) & (builds_on(tops) | spaces) != 0


# --- dealing ------------------------------------------------------------------------------------------------


def _deck_seed(state: State, hand_number: int) -> bytes:
    game_seed = bytes.fromhex(state.seed)
    if state.seed_scheme == DIRECT and hand_number == 1:
        return game_seed
    return hand_seed(game_seed, hand_number)


def new_game(
    *, rules: Rules, players: int, seed: bytes, target_score: int | None, seed_scheme: str = DERIVED
) -> tuple[State, list[Event]]:
    """A new game with its first hand dealt and the first player's turn begun."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"Kings Corner is for {MIN_PLAYERS} to {MAX_PLAYERS} players")
    if target_score is not None and target_score < 1:
        raise ValueError("target_score is a positive whole number or None")
    if seed_scheme not in (DERIVED, DIRECT):
        raise ValueError(f"unknown seed scheme {seed_scheme!r}")
    state = State(
        rules=rules,
        players=players,
        seed=seed.hex(),
        target_score=target_score,
        seed_scheme=seed_scheme,
        dealer=players - 1,
        scores=[0] * players,
    )
    return _deal(state, hand_number=1, dealer=players - 1)


def next_hand(state: State) -> tuple[State, list[Event]]:
    """Deals the next hand, the deal passing one seat to the left; only when a hand is over and the game is
    not."""
    if state.status == FINISHED:
        raise MoveError("game_over", "The game is over; no more hands are dealt.")
    if state.status != HAND_OVER:
        raise MoveError("hand_in_progress", "The current hand is still being played.")
    return _deal(state.copy(), hand_number=state.hand_number + 1, dealer=(state.dealer + 1) % state.players)


def _deal(state: State, *, hand_number: int, dealer: int) -> tuple[State, list[Event]]:
    deck = shuffle(_deck_seed(state, hand_number))
    players = state.players
    hands: list[list[str]] = [[] for _ in range(players)]
    position = 0
    for _ in range(HAND_SIZE):
        for offset in range(1, players + 1):
            hands[(dealer + offset) % players].append(deck[position])
            position += 1
    piles: dict[str, list[str]] = {name: [] for name in PILES}
    for side in SIDES:
        while True:
            card = deck[position]
            position += 1
            if not is_king(card):
                piles[side].append(card)
                break
            corner = next(name for name in CORNERS if not piles[name])
            piles[corner].append(card)
            if state.rules.layout_king == "leave_empty":
                break
    state.hand_number = hand_number
    state.dealer = dealer
    state.status = PLAYING
    state.hands = [sorted(hand, key=CARD_INDEX.__getitem__) for hand in hands]
    state.stock = deck[position:]
    state.piles = piles
    state.current_seat = (dealer + 1) % players
    state.turn = 0
    state.turns_taken = [0] * players
    state.played_this_turn = 0
    state.idle_turns = 0
    events: list[Event] = [
        {
            "type": "deal",
            "hand_number": hand_number,
            "dealer": dealer,
            "piles": {name: list(pile) for name, pile in piles.items()},
            "stock": len(state.stock),
        }
    ]
    _begin_turn(state, events)
    return state, events


# --- turns --------------------------------------------------------------------------------------------------


# A move's events are recorded in a list, or not at all where `events` is None (apply, which returns the state
# alone): the same state either way.


def _draw(state: State, seat: int, events: list[Event] | None) -> None:
    # New lists for the stock and the hand, never changed in place: a move's state shares its lists with
    # the state it was made from (State.successor).
    stock = state.stock
    card = stock[0]
    state.stock = stock[1:]
    # In its place by CARD_INDEX, which orders cards as sort_key does (a hand is kept in that order).
    state.hands[seat] = _with_card(state.hands[seat], card)
    if events is not None:
        events.append({"type": "draw", "seat": seat, "card": card, "stock": len(state.stock)})


def _with_card(hand: list[str], card: str) -> list[str]:
    """`hand` with `card` added, sorted by CARD_INDEX (which orders cards as sort_key does) as a stable sort
    would leave it: the engine keeps every hand in that order, so the card goes into its place, with one
    lookup a card rather than a sort with a key function; a hand out of order (a caller's) is sorted."""
    index = CARD_INDEX[card]
    position = -1
    previous = -1
    count = 0
    for held in hand:
        held_index = CARD_INDEX[held]
        if held_index < previous:
            return sorted([*hand, card], key=CARD_INDEX.__getitem__)
        previous = held_index
        if position < 0 and held_index > index:
            position = count
        count += 1
    if position < 0:
        position = count
    return [*hand[:position], card, *hand[position:]]


def _begin_turn(state: State, events: list[Event] | None) -> None:
    seat = state.current_seat
    state.turn += 1
    state.played_this_turn = 0
    if events is not None:
        events.append({"type": "turn_start", "seat": seat, "turn": state.turn})
    if state.rules.draw_timing != "start" or not state.stock:
        return
    _draw(state, seat, events)
    if state.rules.draw == "until_playable":
        while state.stock and not can_play_a_card(state.rules, state.hands[seat], state.piles):
            _draw(state, seat, events)


def legal_moves(state: State) -> list[Move]:
    """The current player's legal moves in a fixed order, `end_turn` last; none once the hand is over."""
    if state.status != PLAYING:
        return []
    moves = position_moves(state.rules, state.hands[state.current_seat], state.piles)
    moves.append(END_TURN)
    return moves


def apply(state: State, move: Move, *, seat: int | None = None) -> State:
    """step's new state alone, made without writing out the events it would return."""
    return _make_move(state, move, seat, None)


def check_turn(state: State, seat: int | None = None) -> int:
    """The seat to move, once it is sure that a hand is in play and that it is `seat`'s turn (when given);
    raises MoveError otherwise."""
    if state.status == FINISHED:
        raise MoveError("game_over", "The game is over.")
    if state.status != PLAYING:
        raise MoveError("hand_over", "The hand is over; deal the next hand first.")
    if seat is not None and seat != state.current_seat:
        raise MoveError("not_your_turn", f"It is seat {state.current_seat}'s turn, not seat {seat}'s.")
    return state.current_seat


def check_in_hand(state: State, card: str) -> None:
    """Raises MoveError unless `card` is in the hand of the seat to move."""
    if card not in state.hands[state.current_seat]:
        raise _not_in_hand(card)


def _not_in_hand(card: str) -> MoveError:
    return MoveError("card_not_in_hand", f"{card} is not in your hand.")


def step(state: State, move: Move, *, seat: int | None = None) -> tuple[State, list[Event]]:
    """Applies `move` for the current player (or checks that it is `seat`'s turn) and returns the new state
    with what happened. A refused move raises MoveError and leaves `state` unchanged."""
    events: list[Event] = []
    return _make_move(state, move, seat, events), events


def _make_move(state: State, move: Move, seat: int | None, events: list[Event] | None) -> State:
    mover = check_turn(state, seat)
    if isinstance(move, Play):
        if move.to is None:
            raise MoveError("invalid_move", "A play names the pile it goes 'to'.")
        _check_pile_name(move.to)
        # The hand without the card, its one search serving as the check that the card is held.
        hand = list(state.hands[mover])
        try:
            hand.remove(move.card)
        except ValueError:
            raise _not_in_hand(move.card) from None
        refusal = play_refusal(state.rules, state.piles, move.card, move.to)
        if refusal is not None:
            raise MoveError(*refusal)
        new = state.successor()
        new.hands[mover] = hand
        new.piles[move.to] = [*state.piles[move.to], move.card]
        new.played_this_turn += 1
        if events is not None:
            events.append({"type": "play", "seat": mover, "card": move.card, "to": move.to})
        if not hand:
            _end_hand(new, out_seat=mover, events=events)
        return new
    if isinstance(move, MovePile):
        _check_pile_name(move.source)
        _check_pile_name(move.to)
        refusal = move_pile_refusal(state.rules, state.piles, move.source, move.to)
        if refusal is not None:
            raise MoveError(*refusal)
        new = state.successor()
        moving = state.piles[move.source]
        new.piles[move.to] = state.piles[move.to] + moving
        new.piles[move.source] = []
        if events is not None:
            source, to, cards = move.source, move.to, list(moving)
            events.append({"type": "move_pile", "seat": mover, "from": source, "to": to, "cards": cards})
        return new
    if isinstance(move, EndTurn):
        new = state.successor()
        _end_turn(new, events)
        return new
    raise MoveError("invalid_move", f"Unknown move {move!r}.")


_PILE_NAMES: Final = frozenset(PILES)


def _check_pile_name(name: str) -> None:
    if name not in _PILE_NAMES:
        raise MoveError("unknown_pile", f"{name!r} is not a pile: the piles are {', '.join(PILES)}.")


def _end_turn(state: State, events: list[Event] | None) -> None:
    seat = state.current_seat
    # Only a turn played with the stock already empty counts towards a blocked hand: under draw_timing=end
    # the turn that draws the last card was played before the stock ran out.
    played_on_empty_stock = not state.stock
    if state.rules.draw_timing == "end" and state.stock:
        _draw(state, seat, events)
    state.turns_taken[seat] += 1
    if events is not None:
        events.append({"type": "end_turn", "seat": seat, "turn": state.turn})
    if state.played_this_turn or not played_on_empty_stock:
        state.idle_turns = 0
    else:
        state.idle_turns += 1
    if state.idle_turns >= state.players:
        _end_hand(state, out_seat=None, events=events)
        return
    state.current_seat = (seat + 1) % state.players
    _begin_turn(state, events)


# --- the end of a hand and of the game ----------------------------------------------------------------------


def hand_penalties(state: State, out_seat: int | None) -> list[int]:
    """Each seat's penalty for the hand as it stands, by `blocked_scoring` when nobody went out."""
    raw = [hand_penalty(hand) for hand in state.hands]
    if out_seat is not None:
        return [0 if seat == out_seat else raw[seat] for seat in range(state.players)]
    if state.rules.blocked_scoring == "fewest_exempt":
        fewest = min(len(hand) for hand in state.hands)
        return [0 if len(hand) == fewest else raw[seat] for seat, hand in enumerate(state.hands)]
    return raw


def _end_hand(state: State, *, out_seat: int | None, events: list[Event] | None) -> None:
    if out_seat is not None:
        state.turns_taken[out_seat] += 1
    penalties = hand_penalties(state, out_seat)
    state.scores = [score + penalty for score, penalty in zip(state.scores, penalties, strict=True)]
    result: HandResult = {
        "hand_number": state.hand_number,
        "reason": "out" if out_seat is not None else "blocked",
        "out_seat": out_seat,
        "hands": [list(hand) for hand in state.hands],
        "penalties": penalties,
        "scores": list(state.scores),
        "turns_taken": list(state.turns_taken),
    }
    state.hand_results = [result]
    if events is not None:
        hand_over: HandOverEvent = {"type": "hand_over", **result}
        events.append(hand_over)
    lowest = min(state.scores)
    leaders = [seat for seat, score in enumerate(state.scores) if score == lowest]
    # A game to a target goes on past it while the lowest total is shared, so that it has one winner.
    if state.target_score is None or (max(state.scores) >= state.target_score and len(leaders) == 1):
        state.status = FINISHED
        state.winners = leaders
        if events is not None:
            events.append({"type": "game_over", "winners": list(leaders), "scores": list(state.scores)})
    else:
        state.status = HAND_OVER


def daily_result(state: State, seat: int = 0) -> int:
    """The daily result (docs/rules.md) for `seat` after the hand: the others' penalties if it went out first,
    otherwise minus the penalty value of the cards left in its own hand."""
    if not state.hand_results:
        raise ValueError("no hand has ended yet")
    result = state.hand_results[-1]
    if result["out_seat"] == seat:
        return sum(hand_penalty(hand) for other, hand in enumerate(result["hands"]) if other != seat)
    return -hand_penalty(result["hands"][seat])
