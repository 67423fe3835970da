"""A hung database: how long each request takes to be answered while every PostgreSQL process is stopped by
SIGSTOP, with the settings as deployed (DATABASE_CONNECT_TIMEOUT, DATABASE_STATEMENT_TIMEOUT).

    .venv/bin/python bench/database_hung.py [--rounds 5] [--statement-timeout 5] [--connect-timeout 3]

It starts a PostgreSQL server of its own (initdb in a temporary directory, on a free port; never the shared
one) and gunicorn with one worker on it (no Redis, tasks in-process), registers a player and starts a game,
then stops the server and sends, one after another, `GET health`, `POST analysis` (no token), `GET
players/me` and an `end_turn` move, `--rounds` times; it prints, per request, the statuses and the seconds
to the answer (min, max), then the same once the server resumes.
"""

import argparse
import shutil
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.postgres import PrivatePostgres  # noqa: E402
from tests.support.stack import Stack, call  # noqa: E402

POSITION = {"hand": ["JS", "2D"], "piles": {"N": ["QD"]}, "stock": 10}


def round_of(port: int, token: str, game: str) -> list[tuple[str, int, float]]:
    requests = [
        ("GET health", "GET", "/api/v1/health", None, ""),
        ("POST analysis", "POST", "/api/v1/analysis", POSITION, ""),
        ("GET players/me", "GET", "/api/v1/players/me", None, token),
        ("POST moves", "POST", f"/api/v1/games/{game}/moves", {"moves": [{"type": "end_turn"}]}, token),
    ]
    answers = []
    for label, method, path, body, bearer in requests:
        status, _, elapsed = call(port, method, path, body, bearer, timeout=60)
        answers.append((label, status, elapsed))
    return answers


def report(title: str, answers: list[tuple[str, int, float]]) -> None:
    print(title)
    by_label: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for label, status, elapsed in answers:
        by_label[label].append((status, elapsed))
    for label, seen in by_label.items():
        statuses = sorted({status for status, _ in seen})
        times = [elapsed for _, elapsed in seen]
        print(f"  {label:<16} statuses {statuses}  seconds min {min(times):.2f} max {max(times):.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--statement-timeout", default="5")
    parser.add_argument("--connect-timeout", default="3")
    args = parser.parse_args(argv)
    database = PrivatePostgres()
    stack = Stack(
        database_url=database.url,
        broker_url="memory://",
        cache_url="",
        extra_env={
            "CELERY_TASK_ALWAYS_EAGER": "true",
            "DATABASE_STATEMENT_TIMEOUT": args.statement_timeout,
            "DATABASE_CONNECT_TIMEOUT": args.connect_timeout,
        },
    )
    try:
        database.start()
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=1)
        _, player, _ = call(stack.port, "POST", "/api/v1/players", {"name": "Ada"})
        _, game, _ = call(stack.port, "POST", "/api/v1/games", {"opponents": 1}, player["token"])
        print(
            f"DATABASE_STATEMENT_TIMEOUT={args.statement_timeout} "
            f"DATABASE_CONNECT_TIMEOUT={args.connect_timeout}, one gunicorn worker"
        )
        report("answering:", round_of(stack.port, player["token"], game["id"]))
        database.freeze()
        hung = []
        for _ in range(args.rounds):
            hung.extend(round_of(stack.port, player["token"], game["id"]))
        report(f"hung (SIGSTOP), {args.rounds} rounds:", hung)
        database.thaw()
        report("resumed:", round_of(stack.port, player["token"], game["id"]))
    finally:
        stack.close()
        database.close()
        shutil.rmtree(stack.logs, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
