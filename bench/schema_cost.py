"""What the OpenAPI document costs the service against a move: 50 `GET schema/` requests beside 50 move
requests, in one run, as deployed (gunicorn).

    .venv/bin/python bench/schema_cost.py [--requests 50] [--web-workers 2]
        [--database-url postgres://postgres@127.0.0.1:5432/postgres]

It starts gunicorn on a database of its own (made afresh, dropped at the end; no Redis, tasks in-process),
then sends, one after another, `--requests` schema requests (JSON, gzip accepted, as a browser or a client
generator asks; the document is built as each worker starts) and `--requests` move requests (the first
legal move of a game against one normal computer player, a new game whenever one ends), and prints the total
and per-request seconds of each and the ratio schema ÷ moves. It does the same for the schema without gzip.
"""

import argparse
import http.client
import os
import shutil
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.stack import Stack, call, database_create, database_drop  # noqa: E402


def schema_seconds(port: int, requests: int, *, gzip: bool) -> float:
    headers = {"Accept": "application/vnd.oai.openapi+json"}
    if gzip:
        headers["Accept-Encoding"] = "gzip"
    total = 0.0
    for _ in range(requests):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        start = time.monotonic()
        connection.request("GET", "/api/v1/schema/", headers=headers)
        response = connection.getresponse()
        response.read()
        total += time.monotonic() - start
        connection.close()
        assert response.status == 200, response.status
    return total


def move_seconds(port: int, token: str, requests: int) -> float:
    total = 0.0
    game: dict[str, object] = {}
    done = 0
    while done < requests:
        if game.get("status") != "playing" or not game.get("legal_moves"):
            status, game, _ = call(port, "POST", "/api/v1/games", {"opponents": 1}, token)
            assert status == 201, game
            continue
        legal = game["legal_moves"]
        assert isinstance(legal, list)
        status, answer, elapsed = call(
            port, "POST", f"/api/v1/games/{game['id']}/moves", {"moves": [legal[0]]}, token
        )
        assert status == 200, answer
        game = answer
        total += elapsed
        done += 1
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    args = parser.parse_args(argv)
    name = f"kingscorner_schema_{uuid.uuid4().hex[:12]}"
    stack = Stack(
        database_url=database_create(args.database_url, name, fresh=True),
        broker_url="memory://",
        cache_url="",
        extra_env={"CELERY_TASK_ALWAYS_EAGER": "true"},
    )
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=args.web_workers)
        _, player, _ = call(stack.port, "POST", "/api/v1/players", {"name": "Ada"})
        schema = schema_seconds(stack.port, args.requests, gzip=True)
        moves = move_seconds(stack.port, player["token"], args.requests)
        plain = schema_seconds(stack.port, args.requests, gzip=False)
        n = args.requests
        for label, seconds in (("schema (gzip)", schema), ("schema (no gzip)", plain), ("moves", moves)):
            print(f"{n} {label:<17} {seconds:.3f} s, {seconds / n * 1000:.1f} ms each")
        print(f"schema ÷ moves: {schema / moves:.2f} (gzip), {plain / moves:.2f} (no gzip)")
    finally:
        stack.close()
        shutil.rmtree(stack.logs, ignore_errors=True)
        database_drop(args.database_url, name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
