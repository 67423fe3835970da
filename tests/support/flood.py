"""Test and benchmark tooling: a flood of event-stream opens with one token, each held open when it is
accepted, while `health` is asked again and again (tests/e2e/test_stream_caps.py, bench/stream_flood.py)."""

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field


@dataclass
class Flood:
    statuses: list[int] = field(default_factory=list)
    held: list[socket.socket] = field(default_factory=list)
    health: list[tuple[int, float]] = field(default_factory=list)
    retry_after: list[int] = field(default_factory=list)

    def close(self) -> None:
        for sock in self.held:
            sock.close()


def _status_and_headers(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, rest


def _get(
    port: int, path: str, token: str = "", timeout: float = 30
) -> tuple[socket.socket, int, dict[str, str]]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    accept = "text/event-stream" if path.endswith("/stream") else "application/json"
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Accept: {accept}\r\n\r\n"
    sock.sendall(request.encode())
    status, headers, _ = _status_and_headers(sock)
    return sock, status, headers


def health_once(port: int, timeout: float = 30) -> tuple[int, float]:
    start = time.monotonic()
    try:
        sock, status, _ = _get(port, "/api/v1/health", timeout=timeout)
        sock.close()
    except OSError:
        status = 0
    return status, time.monotonic() - start


def stream_flood(port: int, game_id: str, token: str, *, opens: int = 1000, concurrency: int = 50) -> Flood:
    """`opens` stream opens of game `game_id` with `token`, `concurrency` at a time, each accepted one held
    open; `health` asked one request after another meanwhile."""
    flood = Flood()
    lock = threading.Lock()
    done = threading.Event()

    def open_one(_: int) -> None:
        try:
            sock, status, headers = _get(port, f"/api/v1/games/{game_id}/stream", token)
        except OSError:
            with lock:
                flood.statuses.append(0)
            return
        with lock:
            flood.statuses.append(status)
            if status == 200:
                flood.held.append(sock)
            else:
                if "retry-after" in headers:
                    flood.retry_after.append(int(headers["retry-after"]))
                sock.close()

    def poll_health() -> None:
        while not done.is_set():
            flood.health.append(health_once(port))

    poller = threading.Thread(target=poll_health, daemon=True)
    poller.start()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(open_one, range(opens)))
    done.set()
    poller.join()
    return flood


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0
