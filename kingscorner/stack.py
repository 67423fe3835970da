"""Runs the production topology on this machine without Docker: gunicorn, a Celery worker and Celery beat on
their own PostgreSQL database and Redis databases, for end-to-end tests and load benchmarks."""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_create(server_url: str, name: str, *, fresh: bool) -> str:
    """Creates database `name` on the PostgreSQL server of `server_url` (dropping it first when `fresh`)
    and returns its URL."""
    with psycopg.connect(server_url, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))


class Stack:
    """The service's processes, each started with the same production-like environment and logging to a
    file of its own, so that a failing test can show what a process said."""

    def __init__(
        self,
        *,
        database_url: str,
        broker_url: str,
        cache_url: str,
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.logs = Path(tempfile.mkdtemp(prefix="kingscorner-stack-"))
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.env = {
            **os.environ,
            "DEBUG": "false",
            "SECRET_KEY": "stack-secret-key-for-local-end-to-end-runs-only-0123456789",
            "DAILY_SECRET": "stack-daily-secret",
            "DATABASE_URL": database_url,
            "CONN_MAX_AGE": "60",
            "CELERY_BROKER_URL": broker_url,
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "REDIS_URL": cache_url,
            "RATE_LIMIT_ANON": "1000000/min",
            "RATE_LIMIT_USER": "1000000/min",
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
            **(extra_env or {}),
        }

    def manage(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        )

    def _start(self, name: str, command: list[str]) -> subprocess.Popen[bytes]:
        with open(self.logs / f"{name}.log", "ab") as log:
            # A session of its own, so that a kill reaches the process's children (a prefork worker's pool).
            process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.processes[name] = process
        return process

    def start_web(self, *, workers: int = 2) -> None:
        self._start(
            "web",
            [
                str(BIN / "gunicorn"),
                "kingscorner.wsgi",
                "--config",
                "python:kingscorner.gunicorn_conf",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                str(workers),
            ],
        )
        self.wait_until_serving()

    def start_worker(self, name: str = "worker") -> None:
        self._start(
            name,
            [
                str(BIN / "celery"),
                "-A",
                "kingscorner",
                "worker",
                "--loglevel",
                "INFO",
                "--concurrency",
                "1",
                "--hostname",
                f"{name}-{self.port}@%h",
            ],
        )

    def start_beat(self) -> None:
        schedule = self.logs / "celerybeat-schedule"
        self._start(
            "beat",
            [
                str(BIN / "celery"),
                "-A",
                "kingscorner",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                str(schedule),
            ],
        )

    def wait_until_serving(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.processes["web"].poll() is not None:
                raise RuntimeError(f"gunicorn exited: {self.log('web')}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/api/v1/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer within {timeout}s: {self.log('web')}")

    def stop(self, name: str, *, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        """Sends `sig` to a process and waits for it; returns its exit code (killing it after `timeout`)."""
        process = self.processes.pop(name)
        if process.poll() is None:
            if sig == signal.SIGKILL:
                # Nothing of a killed process may go on running, children included.
                os.killpg(process.pid, signal.SIGKILL)
            else:
                # A graceful stop is the parent's to pass on to its children, as it would be in production.
                process.send_signal(sig)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def close(self) -> None:
        for name in list(self.processes):
            try:
                self.stop(name, timeout=15)
            except subprocess.TimeoutExpired:
                pass
