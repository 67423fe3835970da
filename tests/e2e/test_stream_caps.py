"""One token cannot take the streams down: 1,000 stream opens with one token through nginx (the deployed main
configuration's sizing, deploy/nginx.conf) to uvicorn get at most STREAMS_PER_PLAYER 200s and 429
`too_many_streams` for the rest, while `health` and another player's stream keep answering throughout."""

import os
import shutil
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.support.ci import IN_CI
from tests.support.flood import stream_flood
from tests.support.stack import Proxy, Stack, call, database_create, database_drop, nginx_binary
from tests.support.streams import EventStreamClient

pytestmark = pytest.mark.postgres

SERVER_URL = os.environ.get("E2E_DATABASE_SERVER_URL", "postgres://postgres@127.0.0.1:5432/postgres")
CAP = 8


@dataclass
class Service:
    stack: Stack
    proxy: Proxy


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    if nginx_binary() is None:
        message = "needs nginx (Debian: apt-get install nginx); .ci/run installs it"
        if IN_CI:
            pytest.fail(f"CI is set but nginx is missing: {message}", pytrace=False)
        pytest.skip(message)
    name = f"kingscorner_caps_{uuid.uuid4().hex[:12]}"
    # The leases on the run's Redis (REDIS_URL) when it has one, as deployed; keys are per player and address.
    stack = Stack(
        database_url=database_create(SERVER_URL, name, fresh=True),
        broker_url="memory://",
        cache_url=os.environ.get("REDIS_URL", ""),
        extra_env={
            "CELERY_TASK_ALWAYS_EAGER": "true",
            "NUM_PROXIES": "1",
            "STREAM_HEARTBEAT_SECONDS": "2",
            "STREAMS_PER_PLAYER": str(CAP),
            "RATE_LIMIT_USER": "1200/min",
        },
    )
    proxy: Proxy | None = None
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=2)
        stack.start_stream()
        proxy = Proxy(upstream=f"127.0.0.1:{stack.port}", stream_upstream=f"127.0.0.1:{stack.stream_port}")
        proxy.start()
        yield Service(stack=stack, proxy=proxy)
    finally:
        if proxy is not None:
            proxy.close()
        stack.close()
        database_drop(SERVER_URL, name)
        shutil.rmtree(stack.logs, ignore_errors=True)


def _player_with_game(port: int, name: str) -> tuple[str, dict[str, object]]:
    status, player, _ = call(port, "POST", "/api/v1/players", {"name": name})
    assert status == 201, player
    status, game, _ = call(port, "POST", "/api/v1/games", {"opponents": 1}, player["token"])
    assert status == 201, game
    return str(player["token"]), game


def test_a_thousand_stream_opens_with_one_token_get_the_cap_and_nobody_else_notices(service: Service) -> None:
    port = service.proxy.port
    grace_token, grace_game = _player_with_game(port, "Grace")
    grace = EventStreamClient(
        port, f"/api/v1/games/{grace_game['id']}/stream", headers={"Authorization": f"Bearer {grace_token}"}
    )
    ada_token, ada_game = _player_with_game(port, "Ada")
    flood = stream_flood(port, str(ada_game["id"]), ada_token, opens=1000)
    try:
        counted = Counter(flood.statuses)
        assert counted[200] == CAP and counted[429] == 1000 - CAP, (counted, service.proxy.log())
        assert flood.retry_after and min(flood.retry_after) >= 1
        assert {status for status, _ in flood.health} == {200}, flood.health
        assert "worker_connections are not enough" not in service.proxy.log()
        # Grace's stream kept going: it sent her game's log and heartbeats all along (read now), and her next
        # move's events come.
        assert grace.status == 200
        seen = 0
        while True:
            message = grace.next(timeout=30)
            if message.comment == "heartbeat":
                break
            seen = max(seen, message.id or 0)
        legal = grace_game["legal_moves"]
        assert isinstance(legal, list)
        status, moved, _ = call(
            port, "POST", f"/api/v1/games/{grace_game['id']}/moves", {"moves": [legal[0]]}, grace_token
        )
        assert status == 200, moved
        # Past the heartbeats sent while the flood ran, the move's first event.
        assert any((grace.next(timeout=30).id or 0) > seen for _ in range(100))
    finally:
        flood.close()
        grace.close()
