"""A game of 1,000 hands against a fresh one, under gunicorn against PostgreSQL on loopback: the size of the
game's state row, and the median latency (and body size) of GET games/{id}?since_version=0, a plain GET and an
end_turn on each. The review measured 3.0 s and 10.7 MB for that GET and 55 ms (against 10 ms) for an end_turn
after 1,206 hands, when every hand's result stayed in the state and the GET returned the whole log.

    .venv/bin/python bench/long_game.py [--hands 1000] [--requests 15] \
        [--database-url postgres://postgres@127.0.0.1:5432/postgres]

It makes a fresh database `kingscorner_bench_long` on that server, plays the long game through the games
service (seat 0 as a `normal` computer player, against one; the target is set past the API's 500 so that the
game lasts), then starts gunicorn on a free port and times the requests, interleaved.
"""

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.stack import ROOT, database_create, free_port  # noqa: E402

BENCH_DATABASE = "kingscorner_bench_long"


def play_long_game(hands: int) -> tuple[str, str, str, int]:
    """The token, the long game's id, a fresh game's id, and the long game's state size in bytes."""
    import django

    django.setup()
    from games import services
    from games.engine import HAND_OVER, PLAYING, State, make_rules
    from games.engine.players import computer_steps
    from games.models import Game

    player, token = services.player_create(name="Bench")
    target = 10**6
    long = services.game_create(player=player, levels=["normal"], rules=make_rules(), target_score=target)
    fresh = services.game_create(player=player, levels=["normal"], rules=make_rules(), target_score=500)
    ended = 0
    started = time.monotonic()
    while ended < hands:
        state = State.from_json(Game.objects.get(id=long.id).state)
        if state.status == HAND_OVER:
            ended += 1
            if ended < hands:
                services.game_hand_deal(game_id=long.id, player=player)
            continue
        assert state.status == PLAYING
        # Seat 0's turn as a computer at normal plays it, through the players' one computer-turn loop.
        turn = computer_steps(state, {0: "normal"}, bytes.fromhex(state.seed), turns=1)
        moves = [played.move.to_json() for played in turn]
        services.game_moves_apply(game_id=long.id, player=player, moves=moves, expected_version=None)
    services.game_hand_deal(game_id=long.id, player=player)
    size = len(json.dumps(Game.objects.get(id=long.id).state))
    print(f"played {hands} hands in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return token, str(long.id), str(fresh.id), size


def call(port: int, token: str, method: str, path: str, body: Any = None) -> tuple[int, bytes, float]:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    start = time.perf_counter()
    conn.request(method, path, body=None if body is None else json.dumps(body).encode(), headers=headers)
    response = conn.getresponse()
    data = response.read()
    elapsed = time.perf_counter() - start
    conn.close()
    return response.status, data, elapsed


def measure(
    port: int, token: str, games: dict[str, str], requests: int
) -> dict[str, list[tuple[float, int]]]:
    samples: dict[str, list[tuple[float, int]]] = {}
    for _ in range(requests):
        for label, game_id in games.items():
            for kind, path in (("GET since_version=0", "?since_version=0"), ("GET", "")):
                status, data, elapsed = call(port, token, "GET", f"/api/v1/games/{game_id}{path}")
                assert status == 200, data
                samples.setdefault(f"{label}: {kind}", []).append((elapsed, len(data)))
            view = json.loads(call(port, token, "GET", f"/api/v1/games/{game_id}")[1])
            if view["status"] == "hand_over":
                call(port, token, "POST", f"/api/v1/games/{game_id}/hands", {})
            status, data, elapsed = call(
                port, token, "POST", f"/api/v1/games/{game_id}/moves", {"moves": [{"type": "end_turn"}]}
            )
            assert status == 200, data
            samples.setdefault(f"{label}: end_turn", []).append((elapsed, len(data)))
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hands", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=15, help="timed requests of each kind on each game")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a PostgreSQL server; the bench makes its own database there",
    )
    options = parser.parse_args(argv)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kingscorner.settings",
        "DATABASE_URL": database_create(options.database_url, BENCH_DATABASE, fresh=True),
        "CONN_MAX_AGE": "600",
        "RATE_LIMIT_ANON": "1000000/min",
        "RATE_LIMIT_USER": "1000000/min",
        "LOG_LEVEL": "WARNING",
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--verbosity", "0"], cwd=ROOT, env=env, check=True
    )
    os.environ.update(env)
    token, long_id, fresh_id, size = play_long_game(options.hands)
    port = free_port()
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    server = subprocess.Popen(
        [gunicorn, "kingscorner.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1"], cwd=ROOT, env=env
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if call(port, token, "GET", "/api/v1/health")[0] == 200:
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("gunicorn did not answer") from None
                time.sleep(0.2)
        samples = measure(
            port, token, {f"{options.hands} hands": long_id, "fresh": fresh_id}, options.requests
        )
    finally:
        server.terminate()
        server.wait(timeout=20)
    print(f"the {options.hands}-hand game's state row: {size:,} bytes")
    print(f"{'request':<36} {'p50 ms':>8} {'body bytes':>11}")
    for name, values in samples.items():
        p50 = statistics.median(elapsed for elapsed, _ in values)
        print(f"{name:<36} {p50 * 1000:>8.1f} {values[-1][1]:>11,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
