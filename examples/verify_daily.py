"""Verify a daily deal of a Kings Corner API server, and a game played on it, trusting nothing the server says
now: standard library only, every algorithm of docs/rules.md implemented here afresh (nothing is imported from
the project).

For a day whose seed is revealed it checks that SHA-256 of the seed is the day's commitment, that the seed
hashes forward along the season's chain to the season's anchor, and re-deals the cards. Given a game played on
the deal and its player's token, it replays the whole hand from the game's event log with its own rules
checker: every card is the one the seed put there, every move is legal, every computer player's move is the
one the documented `normal` rule chooses from that seat's view, the hand's result and scores are the rules',
and the leaderboard entry of a ranked game is that result.

What it trusts, it says: the anchor you saved before the season (--anchor), the commitments you saved earlier
(--commitments, a file of GET /api/v1/daily/commitments), or, with neither, only the server's word now. With
an anchor, the day's place in its season (which season, and its first day) is never the server's word: it is
the project's published schedule (seasons of 3652 days from 2026-01-01) or the season you saved with the
anchor (--season-start, and --season-days if it is not 3652); a server that names another season is a
mismatch.

    python examples/verify_daily.py --anchor <hex> 2026-03-05
    python examples/verify_daily.py --anchor <hex> --season-start 2026-01-01 2026-03-05
    python examples/verify_daily.py --anchor <hex> 2026-03-05 --game <id> --token <token>
    python examples/verify_daily.py --check-vectors tests/vectors/chain.json

Exit status: 0 verified, 1 a mismatch (the first wrong thing is named), 2 cannot verify (yet): the seed is
not revealed, the game is not finished, or the server could not be read.
"""

import argparse
import hashlib
import hmac
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

VERIFIED, MISMATCH, UNVERIFIABLE = 0, 1, 2

RANKS = "A23456789TJQK"
SUITS = "CDHS"
DECK = [rank + suit for suit in SUITS for rank in RANKS]
SIDES = ("N", "E", "S", "W")
CORNERS = ("NE", "SE", "SW", "NW")
PILES = SIDES + CORNERS
HAND_SIZE = 7
EVENTS_PAGE = 1000
CHAIN_PREFIX = b"kingscorner-chain:"
SEASON_PREFIX = b"kingscorner-season:"
# The schedule of seasons the project publishes (docs/rules.md, "The daily seed chain"): the first season
# starts on this day and each lasts this many days, the next starting the day after. With --anchor, a day's
# place in its season comes from here (or from the season you saved, --season-start), never from the server.
PUBLISHED_FIRST_SEASON_START = date(2026, 1, 1)
PUBLISHED_SEASON_DAYS = 3652

Fetch = Callable[[str, "str | None"], Any]
Move = tuple[str, ...]  # ("play", card, pile), ("move_pile", source, target) or ("end_turn",)
END_TURN: Move = ("end_turn",)


class Unverifiable(Exception):
    """Nothing more can be checked: the server did not answer as expected, or it is too early."""


class Mismatch(Exception):
    """The first thing that does not agree with the seed, the rules or what you trusted."""


def fetch_json(url: str, token: str | None = None) -> Any:
    """GET `url` as JSON, with the bearer token when given."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        body = error.read().decode("utf-8", errors="replace")
        raise Unverifiable(f"GET {url} answered {error.code}: {body[:300]}") from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise Unverifiable(f"GET {url} failed: {error}") from None


# --- seeds: the commitment and the season's chain -----------------------------------------------------------


def commitment_of(seed: bytes) -> str:
    return hashlib.sha256(seed).hexdigest()


def anchor_from(seed: bytes, index: int) -> str:
    """The anchor the seed of the season's day `index` (0 for its first) hashes forward to."""
    for _ in range(index):
        seed = hashlib.sha256(CHAIN_PREFIX + seed).digest()
    return hashlib.sha256(seed).hexdigest()


@dataclass(frozen=True)
class Season:
    """A season of the chain: its first day and its length."""

    start: date
    days: int

    @property
    def last_day(self) -> date:
        return self.start + timedelta(days=self.days - 1)

    def index(self, day: date) -> int:
        """The day's place in the season, 0 for its first day."""
        return (day - self.start).days

    def holds(self, day: date) -> bool:
        return 0 <= self.index(day) < self.days

    def __str__(self) -> str:
        return f"the season of {self.start} ({self.days} days, to {self.last_day})"


def published_season(day: date) -> Season | None:
    """The season `day` is in under the published schedule; None before its first season."""
    if day < PUBLISHED_FIRST_SEASON_START:
        return None
    number = (day - PUBLISHED_FIRST_SEASON_START).days // PUBLISHED_SEASON_DAYS
    start = PUBLISHED_FIRST_SEASON_START + timedelta(days=number * PUBLISHED_SEASON_DAYS)
    return Season(start, PUBLISHED_SEASON_DAYS)


# --- the deal and the seeded streams ------------------------------------------------------------------------


class Stream:
    """Block k = SHA-256(seed ‖ k as 8 bytes big-endian), read as consecutive 8-byte big-endian integers;
    uniform(m) rejects what would bias it."""

    def __init__(self, seed: bytes) -> None:
        self._integers = self._read(seed)

    @staticmethod
    def _read(seed: bytes) -> Iterator[int]:
        block = 0
        while True:
            digest = hashlib.sha256(seed + block.to_bytes(8, "big")).digest()
            for offset in range(0, 32, 8):
                yield int.from_bytes(digest[offset : offset + 8], "big")
            block += 1

    def uniform(self, m: int) -> int:
        limit = 2**64 - 2**64 % m
        value = next(self._integers)
        while value >= limit:
            value = next(self._integers)
        return value % m


def shuffle(seed: bytes) -> list[str]:
    stream = Stream(seed)
    deck = list(DECK)
    for i in range(len(deck) - 1, 0, -1):
        j = stream.uniform(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def computer_stream(game_seed: bytes, hand_number: int, seat: int, turn: int) -> Stream:
    """The stream of one computer turn: SHA-256(game seed ‖ "players" ‖ hand ‖ seat ‖ turn) as its seed."""
    material = game_seed + b"players" + hand_number.to_bytes(4, "big") + seat.to_bytes(1, "big")
    return Stream(hashlib.sha256(material + turn.to_bytes(4, "big")).digest())


# --- the rules ----------------------------------------------------------------------------------------------


def rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def card_order(card: str) -> tuple[int, int]:
    """Rank, then suit C D H S: how hands are held and how `normal` lists cards."""
    return rank(card), SUITS.index(card[1])


def fits(card: str, top: str) -> bool:
    return rank(card) + 1 == rank(top) and (card[1] in "DH") != (top[1] in "DH")


def penalty(cards: list[str]) -> int:
    return sum(10 if card[0] == "K" else 1 for card in cards)


@dataclass
class Rules:
    layout_king: str = "replace"
    empty_side: str = "no_king"
    empty_corner: str = "king"
    king_pile_to_corner: bool = False
    draw: str = "one"
    draw_timing: str = "start"
    blocked_scoring: str = "fewest_exempt"

    @classmethod
    def of(cls, shown: dict[str, Any]) -> "Rules":
        names = cls.__dataclass_fields__
        return cls(**{name: value for name, value in shown.items() if name in names})

    def opens_side(self, card: str) -> bool:
        return self.empty_side == "any" or card[0] != "K"

    def opens_corner(self, card: str) -> bool:
        return self.empty_corner == "any" or card[0] == "K"


@dataclass
class Hand:
    """One hand in play, every card known: what the rules make of each move, as the events the server logs."""

    rules: Rules
    hands: list[list[str]]
    piles: dict[str, list[str]]
    stock: list[str]
    dealer: int
    current: int = 0
    turn: int = 0
    played_this_turn: int = 0
    idle_turns: int = 0
    over: bool = False
    turns_taken: list[int] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def deal(cls, seed: bytes, rules: Rules, players: int) -> "Hand":
        """The first hand of a game shuffled from `seed` itself, as the daily deal is, its first turn
        begun."""
        deck = shuffle(seed)
        dealer = players - 1
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
                if card[0] != "K":
                    piles[side].append(card)
                    break
                piles[next(name for name in CORNERS if not piles[name])].append(card)
                if rules.layout_king == "leave_empty":
                    break
        hand = cls(
            rules,
            [sorted(cards, key=card_order) for cards in hands],
            piles,
            deck[position:],
            dealer,
            current=(dealer + 1) % players,
            turns_taken=[0] * players,
        )
        hand.events.append(
            {
                "type": "deal",
                "hand_number": 1,
                "dealer": dealer,
                "piles": {name: list(pile) for name, pile in piles.items()},
                "stock": len(hand.stock),
            }
        )
        hand._begin_turn()
        return hand

    def take_events(self) -> list[dict[str, Any]]:
        events, self.events = self.events, []
        return events

    # What may be played where.

    def play_refusal(self, seat: int, card: str, to: str) -> str | None:
        if to not in PILES:
            return f"{to!r} is not a pile"
        if card not in self.hands[seat]:
            return f"{card} is not in seat {seat}'s hand"
        pile = self.piles[to]
        if pile:
            if fits(card, pile[-1]):
                return None
            return f"{card} does not fit on {pile[-1]} ({to})"
        if to in CORNERS and not self.rules.opens_corner(card):
            return "only a King opens an empty corner"
        if to in SIDES and not self.rules.opens_side(card):
            return f"a King cannot start the empty side {to}"
        return None

    def move_pile_refusal(self, source: str, to: str) -> str | None:
        if source not in SIDES or to not in PILES:
            return f"no pile moves from {source!r} to {to!r}: only a side pile moves, onto a pile"
        if source == to:
            return "a pile cannot move onto itself"
        moving, target = self.piles[source], self.piles[to]
        if not moving:
            return f"there is no pile at {source}"
        if not target:
            if to in CORNERS and self.rules.king_pile_to_corner and moving[0][0] == "K":
                return None
            return f"a pile never moves into the empty space {to}"
        if fits(moving[0], target[-1]):
            return None
        return f"the {source} pile (bottom {moving[0]}) does not fit on {target[-1]} ({to})"

    def refusal(self, seat: int, move: Move) -> str | None:
        if self.over:
            return "the hand is over"
        if seat != self.current:
            return f"it is seat {self.current}'s turn, not seat {seat}'s"
        if move[0] == "play":
            return self.play_refusal(seat, move[1], move[2])
        if move[0] == "move_pile":
            return self.move_pile_refusal(move[1], move[2])
        return None

    def legal_moves(self) -> set[Move]:
        """Every play and pile move open to the seat to move (not end_turn)."""
        seat = self.current
        plays = {("play", card, to) for card in self.hands[seat] for to in PILES}
        moves = {("move_pile", source, to) for source in SIDES for to in PILES}
        return {move for move in plays | moves if self.refusal(seat, move) is None}

    def can_play_a_card(self, seat: int) -> bool:
        return any(self.play_refusal(seat, card, to) is None for card in self.hands[seat] for to in PILES)

    # Moves and what follows them.

    def apply(self, move: Move) -> list[dict[str, Any]]:
        """Applies a move the rules allow (check `refusal` first); the events it causes, its own first."""
        seat = self.current
        if move[0] == "play":
            card, to = move[1], move[2]
            self.hands[seat].remove(card)
            self.piles[to].append(card)
            self.played_this_turn += 1
            self.events.append({"type": "play", "seat": seat, "card": card, "to": to})
            if not self.hands[seat]:
                self._end_hand(out_seat=seat)
        elif move[0] == "move_pile":
            source, to = move[1], move[2]
            moving = self.piles[source]
            self.piles[to].extend(moving)
            self.piles[source] = []
            self.events.append({"type": "move_pile", "seat": seat, "from": source, "to": to, "cards": moving})
        else:
            self._end_turn()
        return self.take_events()

    def _draw(self, seat: int) -> None:
        card = self.stock.pop(0)
        self.hands[seat].append(card)
        self.hands[seat].sort(key=card_order)
        self.events.append({"type": "draw", "seat": seat, "card": card, "stock": len(self.stock)})

    def _begin_turn(self) -> None:
        seat = self.current
        self.turn += 1
        self.played_this_turn = 0
        self.events.append({"type": "turn_start", "seat": seat, "turn": self.turn})
        if self.rules.draw_timing != "start" or not self.stock:
            return
        self._draw(seat)
        if self.rules.draw == "until_playable":
            while self.stock and not self.can_play_a_card(seat):
                self._draw(seat)

    def _end_turn(self) -> None:
        seat = self.current
        played_on_empty_stock = not self.stock
        if self.rules.draw_timing == "end" and self.stock:
            self._draw(seat)
        self.turns_taken[seat] += 1
        self.events.append({"type": "end_turn", "seat": seat, "turn": self.turn})
        self.idle_turns = 0 if self.played_this_turn or not played_on_empty_stock else self.idle_turns + 1
        if self.idle_turns >= len(self.hands):
            self._end_hand(out_seat=None)
            return
        self.current = (seat + 1) % len(self.hands)
        self._begin_turn()

    def penalties(self, out_seat: int | None) -> list[int]:
        raw = [penalty(cards) for cards in self.hands]
        if out_seat is not None:
            return [0 if seat == out_seat else points for seat, points in enumerate(raw)]
        if self.rules.blocked_scoring == "fewest_exempt":
            fewest = min(len(cards) for cards in self.hands)
            return [0 if len(cards) == fewest else raw[seat] for seat, cards in enumerate(self.hands)]
        return raw

    def _end_hand(self, *, out_seat: int | None) -> None:
        if out_seat is not None:
            self.turns_taken[out_seat] += 1
        self.over = True
        self.out_seat = out_seat
        scores = self.penalties(out_seat)  # one hand: the totals are its penalties
        self.events.append(
            {
                "type": "hand_over",
                "hand_number": 1,
                "reason": "out" if out_seat is not None else "blocked",
                "out_seat": out_seat,
                "hands": [list(cards) for cards in self.hands],
                "penalties": scores,
                "scores": list(scores),
                "turns_taken": list(self.turns_taken),
            }
        )
        lowest = min(scores)
        winners = [seat for seat, score in enumerate(scores) if score == lowest]
        self.events.append({"type": "game_over", "winners": winners, "scores": list(scores)})

    def daily_result(self, seat: int = 0) -> int:
        """The others' penalty values if `seat` went out, else minus its own."""
        if self.out_seat == seat:
            return sum(penalty(cards) for other, cards in enumerate(self.hands) if other != seat)
        return -penalty(self.hands[seat])


# --- the `normal` computer player (docs/rules.md, "How normal chooses") -------------------------------------


def normal_move(rules: Rules, hand: list[str], piles: dict[str, list[str]], stream: Stream) -> Move | None:
    """Kings into the first empty corner; else a play onto a pile; else a pile move; else the highest card
    into the first empty space that takes it; else nothing. A choice among several is uniform(n)."""
    held = sorted(hand, key=card_order)
    side = next((name for name in SIDES if not piles[name]), None)
    corner = next((name for name in CORNERS if not piles[name]), None)
    if corner is not None:
        kings = [card for card in held if card[0] == "K" and rules.opens_corner(card)]
        if kings:
            return "play", kings[stream.uniform(len(kings))], corner
    builds = [
        ("play", card, name) for name in PILES if piles[name] for card in held if fits(card, piles[name][-1])
    ]
    if builds:
        return builds[stream.uniform(len(builds))]
    moves: list[Move] = []
    for source in SIDES:
        if not piles[source]:
            continue
        bottom = piles[source][0]
        into_corner = rules.king_pile_to_corner and bottom[0] == "K"
        corner_offered = False
        for target in PILES:
            if target == source:
                continue
            if piles[target]:
                if fits(bottom, piles[target][-1]):
                    moves.append(("move_pile", source, target))
            elif target in CORNERS and into_corner and not corner_offered:
                corner_offered = True
                moves.append(("move_pile", source, target))
    if moves:
        return moves[stream.uniform(len(moves))]
    spaces = {
        card: side if side is not None and rules.opens_side(card) else corner
        for card in held
        if (side is not None and rules.opens_side(card))
        or (corner is not None and card[0] != "K" and rules.opens_corner(card))
    }
    if not spaces:
        return None
    card = max(spaces, key=card_order)
    return "play", card, str(spaces[card])


def normal_turn(rules: Rules, hand: list[str], piles: dict[str, list[str]], stream: Stream) -> list[Move]:
    """The moves of normal's whole turn from its seat's view after its draw: normal_move again and again,
    each from where the last left the table, then end_turn unless it went out."""
    hand = list(hand)
    piles = {name: list(pile) for name, pile in piles.items()}
    moves: list[Move] = []
    while hand:
        move = normal_move(rules, hand, piles, stream)
        if move is None:
            break
        moves.append(move)
        if move[0] == "play":
            hand.remove(move[1])
            piles[move[2]].append(move[1])
        else:
            piles[move[2]].extend(piles[move[1]])
            piles[move[1]] = []
    return moves + [END_TURN] if hand else moves


# --- replaying a game's event log ---------------------------------------------------------------------------


def move_of(event: dict[str, Any], rules: Rules) -> Move | None:
    kind = event.get("type")
    if kind == "play":
        return "play", str(event.get("card")), str(event.get("to"))
    if kind == "move_pile":
        return "move_pile", str(event.get("from")), str(event.get("to"))
    # Under draw_timing=end, ending a turn shows first as its draw.
    if kind == "end_turn" or (kind == "draw" and rules.draw_timing == "end"):
        return END_TURN
    return None


def _describe(move: Move | None) -> str:
    if move is None:
        return "nothing"
    if move[0] == "play":
        return f"play {move[1]} on {move[2]}"
    if move[0] == "move_pile":
        return f"move the {move[1]} pile onto {move[2]}"
    return "end its turn"


def _disagreement(shown: dict[str, Any], expected: dict[str, Any]) -> str | None:
    """What differs between the event shown and the one the rules produce (another seat's draw may hide its
    card; members the rules do not produce, such as `seq`, are not compared)."""
    for key, value in expected.items():
        if key == "card" and expected["type"] == "draw" and "card" not in shown and shown.get("seat") != 0:
            continue
        if shown.get(key) != value:
            return f"{key} is {shown.get(key)!r}, the rules give {value!r}"
    return None


@dataclass
class Replay:
    """The outcome of a replayed log: the hand as it stands, and what was checked."""

    hand: Hand
    checked: dict[str, int] = field(default_factory=dict)

    def count(self, what: str) -> None:
        self.checked[what] = self.checked.get(what, 0) + 1


def replay(
    seed: bytes, rules: Rules, levels: list[str], events: list[dict[str, Any]], game_seed: bytes | None = None
) -> Replay:
    """Replays the log of a one-hand game dealt from `seed` itself (seat 0 a person, seat i the computer at
    `levels[i-1]`). Raises Mismatch at the first event that is not what the seed and the rules give."""
    hand = Hand.deal(seed, rules, 1 + len(levels))
    game_seed = seed if game_seed is None else game_seed
    done = Replay(hand)
    pending = deque(hand.take_events())
    planned: deque[Move] | None = None
    for event in events:
        where = f"event {event.get('seq', '?')} ({event.get('type')})"
        if pending:
            expected = pending.popleft()
            difference = _disagreement(event, expected)
            if difference is not None:
                raise Mismatch(f"{where}: {difference}")
            done.count(str(expected["type"]))
            continue
        if hand.over:
            raise Mismatch(f"{where}: the hand is over; nothing follows its game_over")
        move = move_of(event, rules)
        if move is None:
            raise Mismatch(f"{where}: the rules call for seat {hand.current} to move here")
        seat = event.get("seat")
        if seat != hand.current:
            raise Mismatch(f"{where}: seat {seat!r} moves, but it is seat {hand.current}'s turn")
        level = "person" if seat == 0 else levels[hand.current - 1]
        refusal = hand.refusal(hand.current, move)
        if refusal is not None:
            raise Mismatch(f"{where}: illegal: seat {seat} may not {_describe(move)}: {refusal}")
        if level == "normal":
            if planned is None:
                stream = computer_stream(game_seed, 1, hand.current, hand.turn)
                planned = deque(normal_turn(rules, hand.hands[hand.current], hand.piles, stream))
            chosen = planned.popleft() if planned else None
            if move != chosen:
                raise Mismatch(
                    f"{where}: seat {seat} (normal) chose to {_describe(move)}; normal's rule chooses to "
                    f"{_describe(chosen)}"
                )
            done.count("computer moves checked")
        elif level != "person":
            done.count(f"{level} moves (legal; choices not checked)")
        produced = hand.apply(move)
        if move == END_TURN or hand.over:
            planned = None
        difference = _disagreement(event, produced[0])
        if difference is not None:
            raise Mismatch(f"{where}: {difference}")
        done.count(str(produced[0]["type"]))
        pending.extend(produced[1:])
    if pending:
        raise Mismatch(f"the log ends where the rules give a {pending[0]['type']} event: {pending[0]}")
    return done


# --- the verifier -------------------------------------------------------------------------------------------


@dataclass
class Trust:
    anchor: str | None = None
    commitments: dict[str, str] | None = None
    commitments_path: str | None = None
    # The season of the anchor line you saved (--season-start, --season-days): its first day, and its length
    # (the published length when not given). Without it, an anchor is placed by the published schedule.
    season_start: date | None = None
    season_days: int | None = None

    @property
    def pins_season(self) -> bool:
        """Whether a day's place in its season is fixed without the server's word: by the season you saved,
        or, with an anchor you saved, by the published schedule."""
        return self.anchor is not None or self.season_start is not None

    @property
    def season_source(self) -> str:
        return "the season you saved" if self.season_start is not None else "the published schedule"

    def season_for(self, day: date) -> Season | None:
        """The season `day` is checked in: the one you saved (whether it holds the day or not), else the
        published schedule's; None before the published first season."""
        if self.season_start is not None:
            return Season(self.season_start, self.season_days or PUBLISHED_SEASON_DAYS)
        return published_season(day)

    def describe(self) -> list[str]:
        lines = []
        if self.anchor is not None:
            lines.append(f"the anchor you saved ({self.anchor})")
        if self.commitments is not None:
            lines.append(f"the commitments you saved ({self.commitments_path})")
        if not lines and self.season_start is not None:
            return [
                "only the server's word for the anchor and the commitment (give the anchor you saved, "
                "--anchor)"
            ]
        if not lines:
            return [
                "only the server's word: the anchor, the commitment and the day's place in its season are "
                "read from the server now; save the anchor line before a season (--anchor, --season-start) "
                "or the commitments ahead (--commitments) to check against what it said earlier"
            ]
        return lines

    def describe_season(self) -> str | None:
        """Where the day's place in its season comes from, when anything is trusted besides the server."""
        if self.season_start is not None:
            days = self.season_days or PUBLISHED_SEASON_DAYS
            return f"the season you saved for the day's place in it (from {self.season_start}, {days} days)"
        if self.anchor is not None:
            return (
                "the published schedule for the day's place in its season (seasons of "
                f"{PUBLISHED_SEASON_DAYS} days from {PUBLISHED_FIRST_SEASON_START}), not the server's word"
            )
        if self.commitments is not None:
            return (
                "only the server's word for the day's place in its season (give the anchor line you saved: "
                "--anchor, and --season-start)"
            )
        return None


def load_commitments(path: str) -> dict[str, str]:
    """A saved GET /api/v1/daily/commitments body (or its list, or several of them as a list): date -> hex."""
    with open(path, encoding="utf-8") as file:
        saved = json.load(file)
    pages = saved if isinstance(saved, list) and saved and "commitments" in saved[0] else [saved]
    found: dict[str, str] = {}
    for page in pages:
        for entry in page["commitments"] if isinstance(page, dict) else page:
            found[entry["date"]] = entry["commitment"]
    return found


def game_events(api: str, game_id: str, token: str, fetch: Fetch) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        query = urllib.parse.urlencode({"after": after, "limit": EVENTS_PAGE})
        page = fetch(f"{api}/games/{urllib.parse.quote(game_id)}/events?{query}", token)
        events.extend(page["items"])
        if page["next"] is None:
            return events
        after = page["more_after"]


def leaderboard_entry(api: str, day: str, player_id: str, fetch: Fetch) -> dict[str, Any] | None:
    url: str | None = f"{api}/daily/{day}/leaderboard?limit=100"
    while url is not None:
        page = fetch(url, None)
        for entry in page["items"]:
            if entry["player"]["id"] == player_id:
                return dict(entry)
        url = page["next"]
    return None


def check_seed(
    api: str,
    day: str,
    seed: bytes,
    deal_info: dict[str, Any],
    trust: Trust,
    fetch: Fetch,
    out: Callable[[str], None],
) -> None:
    published = deal_info["commitment"]
    digest = commitment_of(seed)
    if digest != published:
        raise Mismatch(f"SHA-256 of the seed is {digest}, the day's commitment is {published}")
    out(f"  commitment {digest}: SHA-256 of the seed, as the day shows")
    if trust.commitments is not None:
        saved = trust.commitments.get(day)
        if saved is None:
            raise Unverifiable(f"{trust.commitments_path} has no commitment for {day}")
        if saved != digest:
            raise Mismatch(f"SHA-256 of the seed is {digest}, the commitment you saved for {day} is {saved}")
        out(f"  the commitment you saved for {day} is the same")
    if not trust.pins_season:
        check_chain_on_the_servers_word(api, day, seed, fetch, out)
        return
    when = date.fromisoformat(day)
    season, source = trust.season_for(when), trust.season_source
    vouch = (
        "the anchor you saved cannot vouch for it"
        if trust.anchor is not None
        else "the season you gave cannot place it"
    )
    if season is None:
        raise Unverifiable(
            f"{day} is before the first season of the published schedule ({PUBLISHED_FIRST_SEASON_START}): "
            f"{vouch} (if the anchor line you saved names another season_start, give it with --season-start)"
        )
    if not season.holds(when):
        raise Unverifiable(f"{day} is not in {season}, {source}: {vouch}")
    index = season.index(when)
    try:
        served = fetch(f"{api}/daily/anchor?date={day}", None)
    except Unverifiable as error:
        raise Unverifiable(
            f"the server names no season for {day} ({error}); {source} places it on day {index} of {season}"
        ) from None
    named = Season(date.fromisoformat(served["season_start"]), int(served["days"]))
    if named != season:
        hint = (
            ""
            if trust.season_start is not None
            else " (if the anchor line you saved names another season_start or days, give them with "
            "--season-start and --season-days)"
        )
        raise Mismatch(
            f"the server places {day} on day {named.index(when)} of {named}; {source} places it on day "
            f"{index} of {season}: a seed's place in its season is not the server's to choose{hint}"
        )
    wanted = trust.anchor if trust.anchor is not None else served["anchor"]
    whose = "the anchor you saved" if trust.anchor is not None else "the server's anchor"
    check_chain(day, seed, season, index, wanted, whose)
    if trust.anchor is not None and served["anchor"] != trust.anchor:
        raise Mismatch(
            f"the server now publishes {served['anchor']} as the season's anchor, not the one you saved"
        )
    out(
        f"  chain: day {index} of the season of {season.start} (placed by {source}; the server agrees) "
        f"hashes forward to {whose} {wanted}"
    )


def check_chain(day: str, seed: bytes, season: Season, index: int, wanted: str, whose: str) -> None:
    anchor = anchor_from(seed, index)
    if anchor != wanted:
        raise Mismatch(
            f"the seed of {day}, day {index} of the season of {season.start}, hashes forward to {anchor}, "
            f"not to {whose} {wanted}"
        )


def check_chain_on_the_servers_word(
    api: str, day: str, seed: bytes, fetch: Fetch, out: Callable[[str], None]
) -> None:
    """Without an anchor or a season you saved: the season, its first day and its anchor as the server
    names them now."""
    try:
        served = fetch(f"{api}/daily/anchor?date={day}", None)
    except Unverifiable:
        out(
            f"  {day} is before the first season: its seed is on no chain; the commitment alone vouches "
            "for it"
        )
        return
    season = Season(date.fromisoformat(served["season_start"]), int(served["days"]))
    when = date.fromisoformat(day)
    if not season.holds(when):
        raise Mismatch(
            f"the season of {day} starts {season.start} and lasts {season.days} days: {day} is not in it"
        )
    index = season.index(when)
    check_chain(day, seed, season, index, served["anchor"], "the server's anchor")
    out(
        f"  chain: day {index} of the season of {season.start} (as the server places it) hashes forward to "
        f"the server's anchor {served['anchor']}"
    )


def check_game(
    api: str,
    day: str,
    seed: bytes,
    deal_info: dict[str, Any],
    game_id: str,
    token: str,
    fetch: Fetch,
    out: Callable[[str], None],
) -> bool:
    """Replays the game; True when it is finished and everything agrees."""
    game = fetch(f"{api}/games/{urllib.parse.quote(game_id)}", token)
    if game.get("seed") is not None and game["seed"] != seed.hex():
        raise Mismatch(f"game {game_id} was dealt from seed {game['seed']}, not the day's")
    levels = [opponent["level"] for opponent in deal_info["opponents"]]
    rules = Rules.of(deal_info["rules"])
    events = game_events(api, game_id, token, fetch)
    done = replay(seed, rules, levels, events)
    counts = ", ".join(f"{count} {what}" for what, count in done.checked.items())
    out(f"Game {game_id}: {len(events)} events replayed, each as the seed and the rules give it ({counts})")
    unchecked = sorted({level for level in levels if level != "normal"})
    if unchecked:
        out(
            f"  the computer players at {', '.join(unchecked)} were checked for legal moves only: this "
            "verifier reproduces only normal's choices"
        )
    hand = done.hand
    if game.get("status") == "finished" and not hand.over and game.get("closed_reason") != "attempt_expired":
        raise Mismatch(f"game {game_id} is shown finished, but its log stops before the hand ends")
    if game.get("table") is not None and game["table"].get("piles") != hand.piles:
        raise Mismatch(
            f"game {game_id} shows the piles {game['table']['piles']}, the log leads to {hand.piles}"
        )
    if game.get("hand") is not None and sorted(game["hand"]) != sorted(hand.hands[0]):
        raise Mismatch(f"game {game_id} shows your hand as {game['hand']}, the log leaves {hand.hands[0]}")
    mine = fetch(f"{api}/daily/{day}", token)
    attempt = next((a for a in mine.get("attempts", []) if a["game_id"] == game_id), None)
    if attempt is None:
        raise Mismatch(f"game {game_id} is not one of your attempts at {day}")
    if hand.over:
        result, turns = hand.daily_result(0), hand.turns_taken[0]
        how = "blocked" if hand.out_seat is None else f"with seat {hand.out_seat} out"
        out(f"  the hand ended {how}: your result {result:+d} in {turns} turns")
    elif attempt["ranked"]:
        # A ranked hand unfinished at the finishing deadline (the seed is revealed: it has passed) is closed
        # as it stood: minus the penalty value of your hand.
        result, turns = -penalty(hand.hands[0]), hand.turns_taken[0]
        out(f"  the hand was left unfinished: closed at the deadline with {result:+d} after {turns} turns")
    else:
        return False
    if not attempt["ranked"]:
        out("  a practice attempt: it has no leaderboard entry")
        return True
    player_id = fetch(f"{api}/players/me", token)["id"]
    entry = leaderboard_entry(api, day, player_id, fetch)
    if entry is None and not hand.over:
        raise Unverifiable(f"your closed game {game_id} is not on the leaderboard yet: try again in a while")
    if entry is None:
        raise Mismatch(f"your ranked game {game_id} has no entry on the leaderboard of {day}")
    shown = (entry["result"], entry["turns"], entry["closed"])
    finished = "finished" if hand.over else "closed"
    if shown != (result, turns, not hand.over):
        raise Mismatch(
            f"the leaderboard shows {entry['result']:+d} in {entry['turns']} turns (closed "
            f"{entry['closed']}); the hand gives {result:+d} in {turns} turns, {finished}"
        )
    out(
        f"  leaderboard: rank {entry['rank']}, {entry['result']:+d} in {entry['turns']} turns, {finished}, "
        "as the hand gives"
    )
    return True


def verify(
    base_url: str,
    day: str,
    *,
    game_id: str | None = None,
    token: str | None = None,
    trust: Trust | None = None,
    out: Callable[[str], None] = print,
    fetch: Fetch = fetch_json,
) -> int:
    trust = trust or Trust()
    out("Trust: " + "; ".join(trust.describe()))
    season_trust = trust.describe_season()
    if season_trust is not None:
        out(f"Trust: {season_trust}")
    api = base_url.rstrip("/") + "/api/v1"
    try:
        deal_info = fetch(f"{api}/daily/{urllib.parse.quote(day)}", None)
        out(f"Daily deal #{deal_info['number']} of {deal_info['date']}")
        if deal_info.get("seed") is None:
            raise Unverifiable(
                f"the seed of {day} is not revealed yet; it will be at {deal_info['seed_revealed_at']}"
            )
        seed = bytes.fromhex(deal_info["seed"])
        if len(seed) != 32:
            raise Mismatch(f"the seed {deal_info['seed']!r} is not 32 bytes")
        check_seed(api, day, seed, deal_info, trust, fetch, out)
        table = Hand.deal(seed, Rules.of(deal_info["rules"]), 1 + len(deal_info["opponents"]))
        out(f"  your hand at your first turn, its draw included: {' '.join(table.hands[0])}")
        if game_id is not None:
            if token is None:
                raise Unverifiable("a game's events need its player's token (--token)")
            if not check_game(api, day, seed, deal_info, game_id, token, fetch, out):
                raise Unverifiable(
                    f"game {game_id} is not finished: its events so far agree; verify it once it is"
                )
    except Mismatch as error:
        out(f"MISMATCH: {error}")
        return MISMATCH
    except Unverifiable as error:
        out(f"CANNOT VERIFY: {error}")
        return UNVERIFIABLE
    except (KeyError, TypeError, ValueError) as error:
        out(f"CANNOT VERIFY: the server's answer cannot be read ({error!r})")
        return UNVERIFIABLE
    what = ", and the game replays legally, move by move, to the result recorded" if game_id else ""
    out(f"VERIFIED: the seed of {day} matches its commitment and its chain{what}.")
    return VERIFIED


def check_vectors(path: str, out: Callable[[str], None] = print) -> int:
    """Checks a vectors file of tests/vectors with this verifier's own code: the chain's (seasons) or the
    shuffle's (deals)."""
    with open(path, encoding="utf-8") as file:
        vectors = json.load(file)
    checked = 0
    for season in vectors.get("seasons", []):
        start = date.fromisoformat(season["season_start"])
        last = hmac.new(season["secret"].encode(), SEASON_PREFIX + start.isoformat().encode(), hashlib.sha256)
        if last.hexdigest() != season["last_seed"]:
            out(f"MISMATCH: the last seed of the season of {start}")
            return MISMATCH
        for shown in season["days_shown"]:
            seed = bytes.fromhex(shown["seed"])
            index = (date.fromisoformat(shown["date"]) - start).days
            if (index, commitment_of(seed), anchor_from(seed, index)) != (
                shown["index"],
                shown["commitment"],
                season["anchor"],
            ):
                out(f"MISMATCH: {shown['date']} of the season of {start}")
                return MISMATCH
            checked += 1
    for vector in vectors.get("shuffle", []):
        if shuffle(bytes.fromhex(vector["seed"])) != vector["deck"]:
            out(f"MISMATCH: the shuffle of {vector['seed']}")
            return MISMATCH
        checked += 1
    out(f"VERIFIED: {checked} vectors of {path}")
    return VERIFIED if checked else UNVERIFIABLE


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a day is written YYYY-MM-DD, not {text!r}") from None


def _days(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a season lasts a whole number of days, one or more, not {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("date", nargs="?", help="a day whose seed is revealed, YYYY-MM-DD")
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--game", help="the id of a game played on the day's deal, to replay it")
    parser.add_argument("--token", help="the token of the game's player")
    parser.add_argument("--anchor", help="the season's anchor (hex) you saved before the season")
    parser.add_argument(
        "--season-start",
        type=_day,
        metavar="YYYY-MM-DD",
        help=(
            "the season_start of the anchor line you saved; by default the published schedule's "
            f"(seasons of {PUBLISHED_SEASON_DAYS} days from {PUBLISHED_FIRST_SEASON_START})"
        ),
    )
    parser.add_argument(
        "--season-days",
        type=_days,
        metavar="N",
        help=f"the days of the anchor line you saved, with --season-start ({PUBLISHED_SEASON_DAYS} if not)",
    )
    parser.add_argument(
        "--commitments", metavar="FILE", help="a GET /api/v1/daily/commitments body you saved"
    )
    parser.add_argument("--check-vectors", metavar="FILE", help="check a tests/vectors file instead")
    args = parser.parse_args(argv)
    if args.check_vectors:
        return check_vectors(args.check_vectors)
    if args.date is None:
        parser.error("a date is needed")
    if args.season_days is not None and args.season_start is None:
        parser.error(
            "--season-days goes with --season-start: the season_start and days of the line you saved"
        )
    trust = Trust(
        anchor=args.anchor.lower() if args.anchor else None,
        commitments_path=args.commitments,
        season_start=args.season_start,
        season_days=args.season_days,
    )
    if args.commitments:
        try:
            trust.commitments = load_commitments(args.commitments)
        except (OSError, ValueError, KeyError, TypeError) as error:
            print(f"CANNOT VERIFY: {args.commitments} cannot be read as saved commitments: {error}")
            return UNVERIFIABLE
    return verify(args.base_url, args.date, game_id=args.game, token=args.token, trust=trust)


if __name__ == "__main__":
    sys.exit(main())
