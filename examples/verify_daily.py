"""Verify a daily deal of a Kings Corner API server, and optionally a game played on it, using nothing but
HTTP, the standard library and the algorithm of docs/rules.md (implemented here afresh, not imported).

For a day whose seed has been revealed it checks that SHA-256 of the seed's 32 bytes is the commitment the
server published, re-deals the cards from the seed, and, given a game played on that deal and its player's
token, replays the game's event log: every card the server shows (the layout, your draws, every play and
pile move by anyone, every hand at the end) must be the card the seed put there.

    python examples/verify_daily.py --base-url http://127.0.0.1:8000 2026-03-05
    python examples/verify_daily.py --base-url http://127.0.0.1:8000 2026-03-05 --game <id> --token <token>

Exit status: 0 verified, 1 a mismatch (the data does not agree with the seed), 2 nothing verified (the seed
is not revealed yet, or the server could not be read).
"""

import argparse
import hashlib
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

VERIFIED, MISMATCH, UNVERIFIABLE = 0, 1, 2

RANKS = "A23456789TJQK"
DECK = [rank + suit for suit in "CDHS" for rank in RANKS]
SIDES = ("N", "E", "S", "W")
CORNERS = ("NE", "SE", "SW", "NW")
PILES = SIDES + CORNERS
HAND_SIZE = 7
EVENTS_PAGE = 1000


class Unverifiable(Exception):
    """Nothing can be checked: the server did not answer as expected, or the seed is still secret."""


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


# --- the deal, from docs/rules.md ---------------------------------------------------------------------------


def random_integers(seed: bytes) -> Iterator[int]:
    """Block k = SHA-256(seed ‖ k as 8 bytes big-endian), read as consecutive 8-byte big-endian integers."""
    block = 0
    while True:
        digest = hashlib.sha256(seed + block.to_bytes(8, "big")).digest()
        for offset in range(0, len(digest), 8):
            yield int.from_bytes(digest[offset : offset + 8], "big")
        block += 1


def shuffle(seed: bytes) -> list[str]:
    """Fisher–Yates from the fixed deck order, j drawn by rejection sampling from the seed's stream."""
    integers = random_integers(seed)
    deck = list(DECK)
    for i in range(len(deck) - 1, 0, -1):
        bound = i + 1
        limit = 2**64 - 2**64 % bound
        value = next(integers)
        while value >= limit:
            value = next(integers)
        j = value % bound
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@dataclass
class Table:
    """Every card's place: each seat's hand, the eight piles (bottom first) and the stock (top first)."""

    hands: list[list[str]]
    piles: dict[str, list[str]]
    stock: list[str]
    dealer: int


def deal(seed: bytes, *, players: int, layout_king: str) -> Table:
    """The first hand of a game whose deck is shuffled from `seed` itself, as the daily deal is."""
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
            corner = next(name for name in CORNERS if not piles[name])
            piles[corner].append(card)
            if layout_king == "leave_empty":
                break
    return Table(hands=hands, piles=piles, stock=deck[position:], dealer=dealer)


# --- replaying a game's event log ---------------------------------------------------------------------------


@dataclass
class Replay:
    """Follows the log on the table the seed dealt, noting every disagreement and what was checked."""

    table: Table
    problems: list[str] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)
    hand_over: bool = False

    def _count(self, what: str) -> None:
        self.checked[what] = self.checked.get(what, 0) + 1

    def _problem(self, event: dict[str, Any], text: str) -> None:
        self.problems.append(f"event {event.get('seq', '?')} ({event.get('type')}): {text}")

    def apply(self, event: dict[str, Any]) -> None:
        handler: Callable[[dict[str, Any]], None] | None = getattr(self, f"_on_{event.get('type')}", None)
        if handler is None:
            self._problem(event, "an event type this verifier does not know")
            return
        handler(event)

    def _on_deal(self, event: dict[str, Any]) -> None:
        if event.get("hand_number") != 1 or self.checked.get("deal"):
            self._problem(event, "a daily deal is one hand; a second deal cannot come from its seed")
            return
        table = self.table
        if event.get("dealer") != table.dealer:
            self._problem(event, f"dealer {event.get('dealer')}, the seed's deal has {table.dealer}")
        for name in PILES:
            shown = event.get("piles", {}).get(name, [])
            if shown != table.piles[name]:
                self._problem(event, f"pile {name} is {shown}, the seed laid out {table.piles[name]}")
        if event.get("stock") != len(table.stock):
            self._problem(event, f"stock of {event.get('stock')}, the seed leaves {len(table.stock)}")
        self._count("deal")

    def _on_draw(self, event: dict[str, Any]) -> None:
        seat, table = event.get("seat"), self.table
        if not isinstance(seat, int) or not 0 <= seat < len(table.hands):
            self._problem(event, f"no seat {seat!r}")
            return
        if not table.stock:
            self._problem(event, "a draw from an empty stock")
            return
        card = table.stock.pop(0)
        if "card" in event:
            if event["card"] != card:
                self._problem(event, f"seat {seat} drew {event['card']}, the seed's stock has {card} on top")
            self._count("draws shown")
        if event.get("stock") != len(table.stock):
            self._problem(
                event, f"{event.get('stock')} cards left in the stock, the seed leaves {len(table.stock)}"
            )
        table.hands[seat].append(card)
        self._count("draws")

    def _on_play(self, event: dict[str, Any]) -> None:
        seat, card, to = event.get("seat"), event.get("card"), event.get("to")
        table = self.table
        if not isinstance(seat, int) or not 0 <= seat < len(table.hands) or to not in PILES:
            self._problem(event, f"seat {seat!r} or pile {to!r} does not exist")
            return
        if not isinstance(card, str):
            self._problem(event, f"seat {seat} played {card!r}, which is not a card")
            return
        if card in table.hands[seat]:
            table.hands[seat].remove(card)
        else:
            self._problem(event, f"seat {seat} played {card}, which the seed did not put in its hand")
        table.piles[to].append(card)
        self._count("plays")

    def _on_move_pile(self, event: dict[str, Any]) -> None:
        source, to = event.get("from"), event.get("to")
        if source not in SIDES or to not in PILES:
            self._problem(event, f"no pile move from {source!r} to {to!r}")
            return
        piles = self.table.piles
        if event.get("cards") != piles[source]:
            self._problem(event, f"moved {event.get('cards')} from {source}, which holds {piles[source]}")
            return
        piles[to].extend(piles[source])
        piles[source] = []
        self._count("pile moves")

    def _on_hand_over(self, event: dict[str, Any]) -> None:
        shown = event.get("hands", [])
        for seat, hand in enumerate(self.table.hands):
            left = shown[seat] if seat < len(shown) else None
            if left is None or sorted(left) != sorted(hand):
                self._problem(
                    event, f"seat {seat} is shown holding {left}, the seed leaves it {sorted(hand)}"
                )
        self.hand_over = True
        self._count("end of hand")

    def _on_turn_start(self, event: dict[str, Any]) -> None:
        """Reveals no card."""

    def _on_end_turn(self, event: dict[str, Any]) -> None:
        """Reveals no card."""

    def _on_game_over(self, event: dict[str, Any]) -> None:
        """Reveals no card."""


# --- the verifier -------------------------------------------------------------------------------------------


def game_events(api: str, game_id: str, token: str) -> list[dict[str, Any]]:
    """The whole event log of a game, page by page."""
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        query = urllib.parse.urlencode({"after": after, "limit": EVENTS_PAGE})
        page = fetch_json(f"{api}/games/{urllib.parse.quote(game_id)}/events?{query}", token)
        events.extend(page["events"])
        if not page["has_more"]:
            return events
        after = page["last"]


def verify(
    base_url: str, day: str, *, game_id: str | None, token: str | None, out: Callable[[str], None]
) -> int:
    api = base_url.rstrip("/") + "/api/v1"
    deal_info = fetch_json(f"{api}/daily/{urllib.parse.quote(day)}")
    out(f"Daily deal #{deal_info['number']} of {deal_info['date']}")
    seed_hex = deal_info.get("seed")
    if seed_hex is None:
        raise Unverifiable(
            f"the seed of {day} is not revealed yet; it will be at {deal_info['seed_revealed_at']}"
        )
    try:
        seed = bytes.fromhex(seed_hex)
    except ValueError:
        seed = b""
    if len(seed) != 32:
        out(f"MISMATCH: the seed {seed_hex!r} is not 32 bytes in hex")
        return MISMATCH
    problems: list[str] = []
    digest = hashlib.sha256(seed).hexdigest()
    if digest == deal_info["commitment"]:
        out(f"  commitment {digest}: SHA-256 of the seed's 32 bytes, as published")
    else:
        problems.append(
            f"SHA-256 of the seed is {digest}, the published commitment is {deal_info['commitment']}"
        )
    rules = deal_info.get("rules", {})
    table = deal(
        seed, players=1 + len(deal_info["opponents"]), layout_king=rules.get("layout_king", "replace")
    )
    out(f"  your hand as dealt: {' '.join(table.hands[0])}")
    out(f"  layout: {', '.join(f'{name} {pile[-1]}' for name, pile in table.piles.items() if pile)}")
    out(f"  stock, top first: {' '.join(table.stock)}")

    if game_id is not None:
        if token is None:
            raise Unverifiable("a game's events need its player's token (--token)")
        game = fetch_json(f"{api}/games/{urllib.parse.quote(game_id)}", token)
        events = game_events(api, game_id, token)
        replay = Replay(table)
        for event in events:
            replay.apply(event)
        problems += [f"game {game_id}, {problem}" for problem in replay.problems]
        if game.get("seed") is not None and game["seed"] != seed_hex:
            problems.append(f"game {game_id} was dealt from seed {game['seed']}, not the day's")
        if sorted(game["hand"]) != sorted(table.hands[0]):
            problems.append(
                f"game {game_id} shows your hand as {game['hand']}, the log leaves {table.hands[0]}"
            )
        if game["table"]["piles"] != table.piles or game["table"]["stock"] != len(table.stock):
            problems.append(f"game {game_id} shows a table the log does not lead to")
        counts = ", ".join(f"{count} {what}" for what, count in replay.checked.items())
        out(f"Game {game_id}: {len(events)} events replayed ({counts})")
        if not replay.hand_over:
            out("  the game is not finished: its events so far were checked")

    if problems:
        for problem in problems:
            out(f"MISMATCH: {problem}")
        out(f"NOT VERIFIED: {len(problems)} mismatch(es) with the seed of {day}.")
        return MISMATCH
    what = " and every card of the game is the one the seed dealt" if game_id else ""
    out(f"VERIFIED: the seed of {day} matches its commitment{what}.")
    return VERIFIED


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("date", help="a day whose seed is revealed, YYYY-MM-DD")
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--game", help="the id of a game played on the day's deal, to replay its events")
    parser.add_argument("--token", help="the token of the game's player")
    args = parser.parse_args(argv)
    try:
        return verify(args.base_url, args.date, game_id=args.game, token=args.token, out=print)
    except Unverifiable as error:
        print(f"CANNOT VERIFY: {error}")
        return UNVERIFIABLE
    except (KeyError, TypeError) as error:
        print(f"CANNOT VERIFY: the server's answer lacks {error}")
        return UNVERIFIABLE


if __name__ == "__main__":
    sys.exit(main())
