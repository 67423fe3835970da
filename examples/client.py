"""A small third-party client of the Kings Corner API, using nothing but HTTP and the documented endpoints.

It registers a player, plays today's daily deal with a simple strategy chosen from the server's
`legal_moves`, then prints its result and the top of the leaderboard.

    python examples/client.py --base-url http://127.0.0.1:8000
"""

import argparse
import json
import sys
import urllib.error
import urllib.request
from typing import Any

MAX_REQUESTS = 2000


class ApiError(Exception):
    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(f"{status} {problem.get('code')}: {problem.get('detail')}")
        self.status = status
        self.problem = problem


class Client:
    def __init__(self, base_url: str, token: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token

    def request(self, method: str, path: str, body: Any = None) -> Any:
        url = path if path.startswith("http") else f"{self.base_url}/api/v1/{path.lstrip('/')}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            raise ApiError(error.code, json.loads(error.read() or b"{}")) from None


def choose_move(legal_moves: list[dict[str, Any]]) -> dict[str, Any]:
    """Kings into corners first, then any other card, then a pile move; otherwise end the turn."""
    plays = [move for move in legal_moves if move["type"] == "play"]
    kings = [move for move in plays if move["card"].startswith("K")]
    pile_moves = [move for move in legal_moves if move["type"] == "move_pile"]
    for candidates in (kings, plays, pile_moves):
        if candidates:
            return candidates[0]
    return {"type": "end_turn"}


def play_daily(client: Client) -> dict[str, Any]:
    daily: dict[str, Any] = client.request("GET", "daily")
    print(f"Daily deal #{daily['number']} of {daily['date']} (commitment {daily['commitment'][:16]}…)")
    attempt = client.request("POST", f"daily/{daily['date']}/attempts", {})
    game = attempt["game"]
    print(f"Attempt {attempt['id']} ({'ranked' if attempt['ranked'] else 'unranked'}), game {game['id']}")
    for _ in range(MAX_REQUESTS):
        if game["status"] != "playing":
            break
        move = choose_move(game["legal_moves"])
        game = client.request(
            "POST", f"games/{game['id']}/moves", {"moves": [move], "expected_version": game["version"]}
        )
    else:
        raise RuntimeError("the game did not end within the request budget")
    return daily


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--name", default="Example client")
    args = parser.parse_args(argv)

    client = Client(args.base_url)
    player = client.request("POST", "players", {"name": args.name})
    client.token = player["token"]
    print(f"Registered {player['name']} ({player['id']})")

    daily = play_daily(client)
    me = client.request("GET", f"daily/{daily['date']}/leaderboard/me")
    print(f"Result {me['result']:+d}: rank {me['rank']} of {me['count']} (percentile {me['percentile']})")
    board = client.request("GET", f"daily/{daily['date']}/leaderboard?limit=10")
    print(f"Leaderboard for {board['date']} ({board['count']} players):")
    for entry in board["entries"]:
        name, result = entry["player"]["name"], entry["result"]
        print(f"  {entry['rank']:>4}  {name:<32} {result:+4d}  {entry['turns']} turns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
