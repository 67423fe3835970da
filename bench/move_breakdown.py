"""Where the time of a request goes, against the floor (the bare view of bench/floor/: one prepared statement)
and GET players/me: in-process (Django's test client, no HTTP), on
PostgreSQL and with the rate limits counted in Redis, the median milliseconds a request spends in DRF's
authentication (with the rate limit's count, which overlaps the token's lookup) and throttle, the move's
database read (with the count's answer) and write (games/persistence.py), the rest of its
service (the engine), the game view's serializer and the JSON renderer, for the floor, GET players/me, a play
and an end_turn against three normal players.

    .venv/bin/python bench/move_breakdown.py [--requests 300]
        [--database-url postgres://postgres@127.0.0.1:5432/postgres] [--database-name kingscorner_breakdown]
        [--redis-url redis://127.0.0.1:6379/11]

It uses the database `<database-name>` on that server (made afresh and migrated). The stages are timed
by wrapping the functions named in the table; a stage's time includes the stages inside it.
"""

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# The benchmark's settings and URL conf, with the floor view (bench/floor/).
sys.path.append(str(Path(__file__).resolve().parent / "floor"))

from tests.support.stack import database_create  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    parser.add_argument("--database-name", default="kingscorner_breakdown")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/11")
    options = parser.parse_args(argv)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "floor_settings",
            "DATABASE_URL": database_create(options.database_url, options.database_name, fresh=True),
            "REDIS_URL": options.redis_url,
            "CONN_MAX_AGE": "60",
            "RATE_LIMIT_ANON": "1000000/min",
            "RATE_LIMIT_USER": "1000000/min",
            "LOG_LEVEL": "WARNING",
        }
    )
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client
    from rest_framework import views

    import games.apis.responses
    import games.persistence
    import games.services
    from kingscorner.api import renderers

    call_command("migrate", verbosity=0)
    spent: dict[str, float] = defaultdict(float)

    def timed(owner: Any, name: str, label: str) -> None:
        function = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - start

        setattr(owner, name, wrapper)

    stages = [
        (views.APIView, "dispatch", "DRF view, in all"),
        # The rate limit's count is sent and answered during authentication's lookup (or, on the move
        # path, during its database read); the throttle only decides from it.
        (views.APIView, "perform_authentication", "authentication+count"),
        (views.APIView, "check_throttles", "rate limit's decision"),
        (games.services, "game_moves_apply", "move service, in all"),
        (games.persistence, "game_load", "  its database read"),
        (games.persistence, "game_save", "  its database write"),
        (games.apis.responses, "render_game_view", "game view serializer"),
        (renderers.JSONRenderer, "render", "JSON renderer"),
    ]
    for owner, name, label in stages:
        timed(owner, name, label)

    client = Client()
    created = client.post("/api/v1/players", json.dumps({"name": "bench"}), content_type="application/json")
    headers = {"Authorization": f"Bearer {json.loads(created.content)['token']}"}

    def post(path: str, body: Any) -> Any:
        response = client.post(path, json.dumps(body), content_type="application/json", headers=headers)
        return json.loads(response.content)

    class Get:
        def __init__(self, path: str) -> None:
            self.path = path

        def prepare(self) -> None:
            pass

        def send(self) -> None:
            client.get(self.path, headers=headers)

    class Move:
        """One move of `kind` a request, in a game kept going; `prepare` (untimed) reaches a position with
        such a move."""

        def __init__(self, kind: str) -> None:
            self.kind = kind
            self.view: dict[str, Any] = {"status": "none"}
            self.choice: dict[str, Any] = {}

        def prepare(self) -> None:
            while True:
                if self.view["status"] != "playing":
                    self.view = post("/api/v1/games", {"level": "normal", "target_score": None})
                    continue
                found = next((m for m in self.view["legal_moves"] if m["type"] == self.kind), None)
                if found is not None:
                    self.choice = found
                    return
                self.send({"type": "end_turn"})

        def send(self, move: dict[str, Any] | None = None) -> None:
            body = {"moves": [move or self.choice], "expected_version": self.view["version"]}
            self.view = post(f"/api/v1/games/{self.view['id']}/moves", body)

    kinds: dict[str, Get | Move] = {
        "floor": Get("/bench/floor"),
        "GET me": Get("/api/v1/players/me"),
        "play": Move("play"),
        "end_turn": Move("end_turn"),
    }
    samples: dict[str, dict[str, list[float]]] = {name: defaultdict(list) for name in kinds}
    # The kinds in turn, a request of each a round, so that the machine's drifts fall on all alike.
    for number in range(options.requests + 20):
        for name, kind in kinds.items():
            kind.prepare()
            spent.clear()
            start = time.perf_counter()
            kind.send()
            elapsed = time.perf_counter() - start
            if number >= 20:
                samples[name]["request, in all"].append(elapsed)
                for _, _, label in stages:
                    samples[name][label].append(spent.get(label, 0.0))

    def median(name: str, label: str) -> float:
        return statistics.median(samples[name][label]) * 1000

    print(f"in-process, {options.requests} requests of each kind, median ms a request")
    print(f"{'stage':<26}" + "".join(f"{name:>10}" for name in kinds))
    for label in ["request, in all", *(label for _, _, label in stages)]:
        print(f"{label:<26}" + "".join(f"{median(name, label):>10.3f}" for name in kinds))
    for base_name in ("floor", "GET me"):
        base = median(base_name, "request, in all")
        ratios = "".join(f"{median(name, 'request, in all') / base:>10.2f}" for name in kinds)
        print(f"{'ratio to ' + base_name:<26}" + ratios)
    return 0


if __name__ == "__main__":
    sys.exit(main())
