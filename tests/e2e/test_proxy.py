"""nginx from deploy/nginx.conf.template (the compose file's proxy) in front of gunicorn, run for real with
the machine's nginx: while twice as many slow clients as gunicorn has workers trickle request bodies,
`health` and a move through the proxy answer at once, whereas the same clients sent to gunicorn directly hold
every worker. Also what the proxy refuses itself (as problem+json), and what it tells Django of the client."""

import http.client
import json
import os
import shutil
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.ci import IN_CI
from tests.support.stack import (
    Proxy,
    SlowClient,
    Stack,
    database_create,
    database_drop,
    free_port,
    nginx_binary,
)

pytestmark = pytest.mark.postgres

SERVER_URL = os.environ.get("E2E_DATABASE_SERVER_URL", "postgres://postgres@127.0.0.1:5432/postgres")
WORKERS = 2
SLOW_CLIENTS = 2 * WORKERS
# Each slow client sends this 12-byte body one byte a second, holding its connection for about 12 s.
SLOW_BODY = b'{"name":"s"}'
# A request answered within this while the slow clients hold their connections was not held by them.
ANSWERED_WITHIN = 8.0


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
    name = f"kingscorner_proxy_{uuid.uuid4().hex[:12]}"
    # No Redis: the in-process cache and in-process tasks keep this test off every shared Redis database.
    stack = Stack(
        database_url=database_create(SERVER_URL, name, fresh=True),
        broker_url="memory://",
        cache_url="",
        extra_env={"CELERY_TASK_ALWAYS_EAGER": "true", "NUM_PROXIES": "1", "SECURE_PROXY_SSL_HEADER": "true"},
    )
    proxy = Proxy(upstream=f"127.0.0.1:{stack.port}")
    try:
        stack.manage("migrate", "--noinput", "--verbosity", "0")
        stack.start_web(workers=WORKERS)
        proxy.start()
        yield Service(stack=stack, proxy=proxy)
    finally:
        proxy.close()
        stack.close()
        shutil.rmtree(stack.logs, ignore_errors=True)
        database_drop(SERVER_URL, name)


def _request(
    port: int,
    method: str,
    path: str,
    body: Any = None,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 60,
) -> tuple[int, dict[str, str], Any, float]:
    """One request on a connection of its own: status, headers, JSON body (or raw bytes) and seconds."""
    start = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        payload = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        connection.request(
            method, path, body=payload, headers={"Content-Type": "application/json", **(headers or {})}
        )
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    try:
        parsed: Any = json.loads(data)
    except ValueError:
        parsed = data
    return response.status, dict(response.getheaders()), parsed, time.monotonic() - start


def _hold(port: int) -> list[SlowClient]:
    clients = [SlowClient(port, "/api/v1/players", SLOW_BODY) for _ in range(SLOW_CLIENTS)]
    for client in clients:
        client.start()
    # Let every slow connection be taken up (by a gunicorn worker, or by nginx).
    time.sleep(2)
    return clients


def _play_a_move(port: int) -> tuple[list[int], float]:
    """Registers, starts a game and plays a move: the three requests' statuses and the move's seconds."""
    status_player, _, player, _ = _request(port, "POST", "/api/v1/players", {"name": "Ada"})
    auth = {"Authorization": f"Bearer {player['token']}"} if status_player == 201 else {}
    status_game, _, game, _ = _request(port, "POST", "/api/v1/games", {"opponents": 1}, headers=auth)
    move = next((m for m in game.get("legal_moves", []) if m["type"] == "play"), {"type": "end_turn"})
    body = {"moves": [move], "expected_version": game.get("version")}
    status_move, _, _, seconds = _request(
        port, "POST", f"/api/v1/games/{game.get('id')}/moves", body, headers=auth
    )
    return [status_player, status_game, status_move], seconds


def test_health_and_a_move_answer_through_the_proxy_while_slow_clients_hold_connections(
    service: Service,
) -> None:
    port = service.proxy.port
    slow = _hold(port)
    health_status, _, health, health_seconds = _request(
        port, "GET", "/api/v1/health", timeout=ANSWERED_WITHIN
    )
    statuses, move_seconds = _play_a_move(port)
    still_holding = sum(client.active for client in slow)
    for client in slow:
        client.join(timeout=60)
    print(
        f"\nthrough nginx, {SLOW_CLIENTS} slow clients, {WORKERS} workers: "
        f"health {health_seconds * 1000:.0f} ms, move {move_seconds * 1000:.0f} ms"
    )
    assert health_status == 200 and health["database"] == "ok"
    assert statuses == [201, 201, 200]
    # Answered while every slow client was still sending its body.
    assert still_holding == SLOW_CLIENTS
    # nginx passed each slow body on once it was whole, and gunicorn served it.
    assert [(client.status, client.error) for client in slow] == [(201, None)] * SLOW_CLIENTS


def test_the_same_slow_clients_sent_to_gunicorn_directly_hold_every_worker(service: Service) -> None:
    port = service.stack.port
    slow = _hold(port)
    with pytest.raises(TimeoutError):
        # A worker would answer health in milliseconds; none is free for as long as the slow bodies trickle.
        _request(port, "GET", "/api/v1/health", timeout=ANSWERED_WITHIN / 2)
    for client in slow:
        client.join(timeout=60)
    assert all(client.status == 201 for client in slow)


def test_a_body_over_the_limit_is_refused_by_the_proxy_as_problem_json(service: Service) -> None:
    status, headers, body, _ = _request(service.proxy.port, "POST", "/api/v1/players", b"x" * (64 * 1024 + 1))
    assert status == 413
    assert headers["Content-Type"] == "application/problem+json"
    assert body["code"] == "body_too_large"


def test_a_chunked_body_reaches_the_api_whole(service: Service) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", service.proxy.port, timeout=30)
    try:
        connection.request(
            "POST",
            "/api/v1/players",
            body=iter([b'{"name": ', b'"Chunky"}']),
            headers={"Content-Type": "application/json"},
            encode_chunked=True,
        )
        response = connection.getresponse()
        body = json.loads(response.read())
    finally:
        connection.close()
    assert response.status == 201, body
    assert body["name"] == "Chunky"


def test_the_proxy_answers_an_unreadable_request_as_problem_json(service: Service) -> None:
    status, headers, body, _ = _request(
        service.proxy.port, "GET", "/api/v1/health", headers={"X-Big": "x" * 9000}, timeout=30
    )
    assert status == 431
    assert headers["Content-Type"] == "application/problem+json"
    assert body["code"] == "headers_too_large"


def test_a_request_line_nginx_cannot_read_is_refused_as_problem_json(service: Service) -> None:
    with socket.create_connection(("127.0.0.1", service.proxy.port), timeout=30) as sock:
        sock.sendall(b"GARBAGE\r\n\r\n")
        response = http.client.HTTPResponse(sock)
        response.begin()
        body = json.loads(response.read())
    assert response.status == 400
    assert response.getheader("Content-Type") == "application/problem+json"
    assert body["code"] == "malformed_request"


@pytest.mark.parametrize(
    "request_head",
    [
        # A request line over nginx's 8 KB buffers: its 414, answered as gunicorn answers a long one.
        b"GET /api/v1/games?" + b"limit=1&" * 1200 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        # A transfer coding nginx does not implement: its 501, answered as gunicorn answers one.
        b"POST /api/v1/players HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: br\r\n\r\n",
    ],
    ids=["request_line", "transfer_coding"],
)
def test_nginx_refuses_what_gunicorn_would_with_the_same_code_and_status(
    service: Service, request_head: bytes
) -> None:
    with socket.create_connection(("127.0.0.1", service.proxy.port), timeout=30) as sock:
        sock.sendall(request_head)
        response = http.client.HTTPResponse(sock)
        response.begin()
        body = json.loads(response.read())
    assert (response.status, body["status"], body["code"]) == (400, 400, "malformed_request")
    assert response.getheader("Content-Type") == "application/problem+json"


def test_an_upstream_that_does_not_answer_is_a_502_problem(service: Service) -> None:
    proxy = Proxy(upstream=f"127.0.0.1:{free_port()}")
    try:
        proxy.start()
        status, headers, body, _ = _request(proxy.port, "GET", "/api/v1/health")
    finally:
        proxy.close()
    assert status == 502
    assert headers["Content-Type"] == "application/problem+json"
    assert body["code"] == "bad_gateway"


def test_django_sees_the_clients_host_and_nginxs_scheme_not_a_forged_one(service: Service) -> None:
    port = service.proxy.port
    status, headers, _, _ = _request(
        port, "POST", "/api/v1/players", {"name": "Ada"}, headers={"X-Forwarded-Proto": "https"}
    )
    assert status == 201
    assert headers["Location"] == f"http://127.0.0.1:{port}/api/v1/players/me"


def test_behind_a_trusted_load_balancer_its_scheme_is_passed_on(service: Service) -> None:
    proxy = Proxy(upstream=f"127.0.0.1:{service.stack.port}", trust_forwarded_proto=True)
    try:
        proxy.start()
        status, headers, _, _ = _request(
            proxy.port, "POST", "/api/v1/players", {"name": "Ada"}, headers={"X-Forwarded-Proto": "https"}
        )
    finally:
        proxy.close()
    assert status == 201
    assert headers["Location"] == f"https://127.0.0.1:{proxy.port}/api/v1/players/me"
