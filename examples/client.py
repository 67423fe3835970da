"""A small third-party client of the Kings Corner API, using nothing but HTTP and the documented endpoints
(standard library only).

It registers a player, plays today's daily deal, then a game against three computer players, and prints its
daily result, the top of the leaderboard and the requests each part took. Every turn is one request: the
client plans the whole turn from its hand, the piles and the game's rules (docs/rules.md, "Planning a whole
turn") and sends it with its `end_turn`, all or none, so a daily hand of two turns takes four requests (the
deal, the attempt and one a turn).

    python examples/client.py --base-url http://127.0.0.1:8000
"""

import argparse
import json
import sys
import urllib.error
import urllib.request
from typing import Any

MAX_TURNS = 500
RANKS = "A23456789TJQK"
SIDES = ("N", "E", "S", "W")
CORNERS = ("NE", "SE", "SW", "NW")
PILES = SIDES + CORNERS
END_TURN = {"type": "end_turn"}


class ApiError(Exception):
    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(f"{status} {problem.get('code')}: {problem.get('detail')}")
        self.status = status
        self.problem = problem


class Client:
    """Sends JSON requests with the player's token, and counts them."""

    def __init__(self, base_url: str, token: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.requests = 0

    def request(self, method: str, path: str, body: Any = None) -> Any:
        url = path if path.startswith("http") else f"{self.base_url}/api/v1/{path.lstrip('/')}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            raise ApiError(error.code, json.loads(error.read() or b"{}")) from None


# --- a whole turn planned with the rules (docs/rules.md, "What fits where", "Moving a pile") --------------


def rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def fits(card: str, top: str) -> bool:
    """One rank lower, the other colour."""
    return rank(card) + 1 == rank(top) and (card[1] in "DH") != (top[1] in "DH")


def opens(rules: dict[str, Any], card: str, pile: str) -> bool:
    """Whether `card` may start the empty pile `pile`."""
    if pile in CORNERS:
        return rules["empty_corner"] == "any" or card[0] == "K"
    return rules["empty_side"] == "any" or card[0] != "K"


def next_move(rules: dict[str, Any], hand: list[str], piles: dict[str, list[str]]) -> dict[str, str] | None:
    """The client's strategy, one move at a time: a King into an empty corner, then a card onto a pile it
    fits, then a side pile moved onto a pile its bottom card fits (which empties the side), then the highest
    card into an empty space that takes it; None when nothing is left to do."""
    held = sorted(hand, key=rank, reverse=True)
    for corner in CORNERS:
        kings = [card for card in held if card[0] == "K" and not piles[corner] and opens(rules, card, corner)]
        if kings:
            return {"type": "play", "card": kings[0], "to": corner}
    for card in held:
        for name in PILES:
            if piles[name] and fits(card, piles[name][-1]):
                return {"type": "play", "card": card, "to": name}
    for source in SIDES:
        if not piles[source]:
            continue
        bottom = piles[source][0]
        for target in PILES:
            if target == source:
                continue
            if piles[target] and fits(bottom, piles[target][-1]):
                return {"type": "move_pile", "from": source, "to": target}
            if not piles[target] and target in CORNERS and rules["king_pile_to_corner"] and bottom[0] == "K":
                return {"type": "move_pile", "from": source, "to": target}
    for card in held:
        for name in PILES:
            if not piles[name] and opens(rules, card, name):
                return {"type": "play", "card": card, "to": name}
    return None


def plan_turn(rules: dict[str, Any], hand: list[str], piles: dict[str, list[str]]) -> list[dict[str, str]]:
    """Every move of the turn, each applied to a copy of the hand and the piles, then `end_turn`, unless the
    hand is emptied first (that move ends the hand, and the request must end there)."""
    hand = list(hand)
    piles = {name: list(pile) for name, pile in piles.items()}
    moves: list[dict[str, str]] = []
    while hand:
        move = next_move(rules, hand, piles)
        if move is None:
            return [*moves, END_TURN]
        moves.append(move)
        if move["type"] == "play":
            hand.remove(move["card"])
            piles[move["to"]].append(move["card"])
        else:
            piles[move["to"]].extend(piles[move["from"]])
            piles[move["from"]] = []
    return moves


def play(client: Client, game: dict[str, Any]) -> dict[str, Any]:
    """Plays the game to its end, one request a turn, dealing each next hand; returns its last view."""
    for _ in range(MAX_TURNS):
        if game["status"] == "finished":
            return game
        if game["status"] == "hand_over":
            game = client.request("POST", f"games/{game['id']}/hands", {"expected_version": game["version"]})
            continue
        moves = plan_turn(game["rules"], game["hand"], game["table"]["piles"])
        body = {"moves": moves, "expected_version": game["version"]}
        game = client.request("POST", f"games/{game['id']}/moves", body)
    raise RuntimeError(f"the game did not end within {MAX_TURNS} turns")


def play_daily(client: Client) -> tuple[dict[str, Any], int]:
    """Today's deal, played through: the deal, its result, and the requests it took."""
    before = client.requests
    daily: dict[str, Any] = client.request("GET", "daily")
    print(f"Daily deal #{daily['number']} of {daily['date']} (commitment {daily['commitment'][:16]}…)")
    attempt = client.request("POST", f"daily/{daily['date']}/attempts")
    ranked = "ranked" if attempt["ranked"] else "unranked"
    print(f"Attempt {attempt['id']} ({ranked}), game {attempt['game']['id']}")
    play(client, attempt["game"])
    return daily, client.requests - before


def play_game(client: Client, target_score: int | None) -> tuple[dict[str, Any], int]:
    """A game against three normal computer players, to `target_score` (None: one hand)."""
    before = client.requests
    game = client.request("POST", "games", {"opponents": 3, "level": "normal", "target_score": target_score})
    return play(client, game), client.requests - before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--name", default="Example client")
    parser.add_argument("--target-score", type=int, default=30, help="the game's target; 0 plays one hand")
    args = parser.parse_args(argv)

    client = Client(args.base_url)
    player = client.request("POST", "players", {"name": args.name})
    client.token = player["token"]
    print(f"Registered {player['display_name']} ({player['id']})")

    daily, daily_requests = play_daily(client)
    me = client.request("GET", f"daily/{daily['date']}/leaderboard/me")
    print(f"Result {me['result']:+d}: rank {me['rank']} of {me['count']} (percentile {me['percentile']})")
    board = client.request("GET", f"daily/{daily['date']}/leaderboard?limit=10")
    print(f"Leaderboard for {board['date']} ({board['count']} players):")
    for entry in board["items"]:
        name, result = entry["player"]["display_name"], entry["result"]
        print(f"  {entry['rank']:>4}  {name:<37} {result:+4d}  {entry['turns']} turns")
    print(f"The daily hand took {daily_requests} requests (the deal, the attempt, then one a turn)")

    game, game_requests = play_game(client, args.target_score or None)
    print(
        f"Game {game['id']}: {game['hand_number']} hands, scores {[p['score'] for p in game['players']]}, "
        f"winners {game['winners']}, in {game_requests} requests (one a turn, one a new hand)"
    )
    print(f"{client.requests} requests in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
