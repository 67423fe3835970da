"""Test and benchmark tooling, not shipped with the service: runs the production topology on this machine
without Docker (gunicorn, uvicorn for event streams, a Celery worker and beat on a PostgreSQL database and
Redis databases of their own, and nginx in front from the same configuration as the compose file's), for
end-to-end tests and benchmarks."""

import configparser
import http.client
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def listening_wait(
    process: "subprocess.Popen[bytes]", port: int, timeout: float, what: str, log: Callable[[], str]
) -> None:
    """Waits until `process` accepts connections on `port`; RuntimeError, with its log, if it exits first or
    does not listen within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited: {log()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen within {timeout}s: {log()}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_name(name: str) -> str:
    """`name` made this process's own: runs of the suite side by side on one server (several checkouts, CI
    beside a benchmark) never drop or share each other's databases."""
    return f"{name}_{os.getpid()}"


def database_create(server_url: str, name: str, *, fresh: bool) -> str:
    """Creates this process's database `name` (database_name) on the PostgreSQL server of `server_url`
    (dropping it first when `fresh`) and returns its URL."""
    name = database_name(name)
    with psycopg.connect(server_url, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))


def database_drop(server_url: str, name: str) -> None:
    name = database_name(name)
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def call(
    port: int, method: str, path: str, body: Any = None, token: str = "", *, timeout: float = 60.0
) -> tuple[int, Any, float]:
    """One JSON request to the server on `port`: its status (0 on a time-out), its body and its seconds."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    start = time.monotonic()
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        data = response.read()
    except TimeoutError:
        return 0, None, time.monotonic() - start
    finally:
        connection.close()
    return response.status, json.loads(data) if data else None, time.monotonic() - start


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
        root: Path = ROOT,
    ) -> None:
        # `root` is the checkout whose code runs (another commit's, for a side-by-side benchmark); the
        # processes run from it with it first on the import path, ahead of the editable install's.
        self.root = root
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
            "PYTHONPATH": str(root),
            **(extra_env or {}),
        }

    def manage(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=self.root,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        )

    def _start(self, name: str, command: list[str]) -> subprocess.Popen[bytes]:
        with open(self.logs / f"{name}.log", "ab") as log:
            # A session of its own, so that a kill reaches the process's children (a prefork worker's pool).
            process = subprocess.Popen(
                command,
                cwd=self.root,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.processes[name] = process
        return process

    def start_command(self, name: str, command: list[str]) -> None:
        """Any command that serves the API on `port` (a benchmark's variant of the server)."""
        self._start(name, command)
        self.wait_until_serving(name, self.base_url)

    def start_web(self, *, workers: int = 2, asgi: bool = False) -> None:
        """The API on `port`: gunicorn as the compose file's `web` runs it, or with `asgi` uvicorn serving
        kingscorner.asgi, as the README's quick start does."""
        if asgi:
            self._start_uvicorn("web", self.port, workers)
        else:
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
        self.wait_until_serving("web", self.base_url)

    def start_stream(self, *, workers: int = 1, name: str = "stream", port: int | None = None) -> int:
        """uvicorn serving kingscorner.asgi for event streams (compose's `stream`) as `name`, on `port` (a
        free one unless given: the same one again restarts it where the proxy sends streams); returns the
        port. The first, `stream`, is on `stream_port`."""
        port = port or free_port()
        if name == "stream":
            self.stream_port = port
            self.stream_url = f"http://127.0.0.1:{port}"
        self._start_uvicorn(name, port, workers)
        self.wait_until_serving(name, f"http://127.0.0.1:{port}")
        return port

    def _start_uvicorn(self, name: str, port: int, workers: int) -> None:
        self._start(
            name,
            [
                str(BIN / "uvicorn"),
                "kingscorner.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                str(workers),
                "--timeout-graceful-shutdown",
                "5",
            ],
        )

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

    def wait_until_serving(self, name: str, base_url: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.processes[name].poll() is not None:
                raise RuntimeError(f"{name} exited: {self.log(name)}")
            try:
                with urllib.request.urlopen(f"{base_url}/api/v1/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"{name} did not answer within {timeout}s: {self.log(name)}")

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


NGINX_TEMPLATE = ROOT / "deploy" / "nginx.conf.template"
NGINX_MAIN = ROOT / "deploy" / "nginx.conf"
NGINX_UPSTREAMS = ROOT / "deploy" / "nginx-upstreams.envsh"
# Where the template writes its access log in the official image (a link to its standard output there).
NGINX_IMAGE_ACCESS_LOG = "/var/log/nginx/access.log"


def nginx_main_sizing() -> dict[str, int]:
    """The connection sizing of deploy/nginx.conf (worker_connections, worker_rlimit_nofile), which the test
    proxy's own main configuration takes over (the rest of that file names the image's paths)."""
    text = NGINX_MAIN.read_text()
    return {
        name: int(match.group(1))
        for name in ("worker_connections", "worker_rlimit_nofile")
        if (match := re.search(rf"^\s*{name}\s+(\d+);", text, re.MULTILINE))
    }


_TEMPLATE_VARIABLE = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")


def nginx_config_render(template: str, variables: Mapping[str, str]) -> str:
    """Substitutes each `${NAME}` as the official nginx image's envsubst does from its environment. A name the
    template uses that `variables` lacks is an error here, as nginx would refuse it there."""
    missing = set(_TEMPLATE_VARIABLE.findall(template)) - set(variables)
    if missing:
        raise KeyError(f"the nginx template needs {sorted(missing)}")
    return _TEMPLATE_VARIABLE.sub(lambda match: variables[match.group(1)], template)


def nginx_upstreams(variables: Mapping[str, str]) -> dict[str, str]:
    """`variables` as the official image's entrypoint leaves them for its envsubst once it has sourced
    deploy/nginx-upstreams.envsh: a comma-separated list of servers made into one `server` line each."""
    script = f'. "{NGINX_UPSTREAMS}"; printf "%s\\0%s" "$PROXY_UPSTREAM" "$PROXY_STREAM_UPSTREAM"'
    run = subprocess.run(
        ["sh", "-c", script],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **variables},
        capture_output=True,
        text=True,
        check=True,
    )
    web, stream = run.stdout.split("\0")
    return {**variables, "PROXY_UPSTREAM": web, "PROXY_STREAM_UPSTREAM": stream}


def nginx_binary() -> str | None:
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


class Proxy:
    """nginx from the machine's package running deploy/nginx.conf.template in front of `upstream` (and of
    `stream_upstream` for event streams, by default the same; either may list several servers,
    comma-separated, as the compose file's variables may), inside a minimal main configuration of its own
    (the official image supplies that part in production), with its access log in its own folder."""

    def __init__(
        self,
        *,
        upstream: str,
        stream_upstream: str | None = None,
        max_body_bytes: int = 64 * 1024,
        trust_forwarded_proto: bool = False,
    ):
        binary = nginx_binary()
        if binary is None:
            raise RuntimeError("nginx is not installed (Debian: apt-get install nginx)")
        self.binary = binary
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.prefix = Path(tempfile.mkdtemp(prefix="kingscorner-proxy-"))
        # nginx's workers drop root's rights and must still reach their temporary directories.
        self.prefix.chmod(0o755)
        server = nginx_config_render(
            NGINX_TEMPLATE.read_text(),
            nginx_upstreams(
                {
                    "PROXY_UPSTREAM": upstream,
                    "PROXY_STREAM_UPSTREAM": stream_upstream or upstream,
                    "PROXY_LISTEN_PORT": f"127.0.0.1:{self.port}",
                    "MAX_BODY_BYTES": str(max_body_bytes),
                    "PROXY_TRUST_FORWARDED_PROTO": "on" if trust_forwarded_proto else "off",
                }
            ),
        )
        self.access_log_path = self.prefix / "access.log"
        if NGINX_IMAGE_ACCESS_LOG not in server:
            raise RuntimeError(f"the nginx template no longer logs to {NGINX_IMAGE_ACCESS_LOG}")
        (self.prefix / "default.conf").write_text(
            server.replace(NGINX_IMAGE_ACCESS_LOG, str(self.access_log_path))
        )
        sizing = nginx_main_sizing()
        temp_paths = "\n".join(
            f"    {kind}_temp_path {self.prefix / kind};"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        (self.prefix / "nginx.conf").write_text(
            f"""daemon off;
worker_processes 1;
worker_rlimit_nofile {sizing["worker_rlimit_nofile"]};
pid {self.prefix / "nginx.pid"};
error_log {self.prefix / "error.log"} warn;
events {{
    worker_connections {sizing["worker_connections"]};
}}
http {{
    access_log off;
{temp_paths}
    include {self.prefix / "default.conf"};
}}
"""
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30) -> None:
        command = [self.binary, "-p", str(self.prefix), "-e", str(self.prefix / "error.log")]
        check = subprocess.run(
            [*command, "-t", "-c", str(self.prefix / "nginx.conf")], capture_output=True, text=True
        )
        if check.returncode != 0:
            raise RuntimeError(f"nginx refuses the configuration: {check.stderr}")
        self.process = subprocess.Popen(
            [*command, "-c", str(self.prefix / "nginx.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        listening_wait(self.process, self.port, timeout, "nginx", self.log)

    def log(self) -> str:
        path = self.prefix / "error.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def access_log(self) -> str:
        """Everything nginx wrote to its access log so far (it writes each line as a request ends)."""
        return self.access_log_path.read_text(errors="replace") if self.access_log_path.exists() else ""

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            # SIGTERM is nginx's fast shutdown; the master ends its workers.
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.prefix, ignore_errors=True)


PGBOUNCER_CONFIG = ROOT / "deploy" / "pgbouncer.ini"


def pgbouncer_binary() -> str | None:
    return shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin:/usr/local/sbin")


def pgbouncer_config() -> configparser.ConfigParser:
    """deploy/pgbouncer.ini as compose's `pgbouncer` runs it (PgBouncer's ini: `;` comments,
    `key = value`)."""
    config = configparser.ConfigParser(interpolation=None, comment_prefixes=(";", "#"), delimiters=("=",))
    config.read_string(PGBOUNCER_CONFIG.read_text())
    return config


class Pooler:
    """PgBouncer from the machine's package (never started as a service) running deploy/pgbouncer.ini in
    front of the PostgreSQL server `server_host`:`server_port`: the file's pooling, with a listen port, a
    directory and trust authentication of its own (PgBouncer then still wants the user in its auth file)."""

    def __init__(
        self,
        *,
        server_host: str = "127.0.0.1",
        server_port: int = 5432,
        user: str = "postgres",
        overrides: Mapping[str, str] | None = None,
    ):
        binary = pgbouncer_binary()
        if binary is None:
            raise RuntimeError("pgbouncer is not installed (Debian: apt-get install pgbouncer)")
        self.binary = binary
        self.port = free_port()
        self.prefix = Path(tempfile.mkdtemp(prefix="kingscorner-pooler-"))
        config = pgbouncer_config()
        databases = config["databases"]
        for name, entry in databases.items():
            databases[name] = entry.replace(
                "host=postgres port=5432", f"host={server_host} port={server_port}"
            )
        (self.prefix / "userlist.txt").write_text(f'"{user}" ""\n')
        config["pgbouncer"].update(
            {
                "listen_addr": "127.0.0.1",
                "listen_port": str(self.port),
                "unix_socket_dir": "",
                "auth_type": "trust",
                "auth_file": str(self.prefix / "userlist.txt"),
                "admin_users": user,
                "logfile": str(self.prefix / "pgbouncer.log"),
                "pidfile": str(self.prefix / "pgbouncer.pid"),
                **(overrides or {}),
            }
        )
        with open(self.prefix / "pgbouncer.ini", "w") as file:
            config.write(file)
        # PgBouncer refuses to run as root: then it drops to `nobody`, who must write its log and pid file.
        self.run_as: list[str] = []
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            for path in (self.prefix, *self.prefix.iterdir()):
                os.chown(path, nobody.pw_uid, nobody.pw_gid)
            self.run_as = ["-u", "nobody"]
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, database: str, user: str = "postgres") -> str:
        return f"postgres://{user}@127.0.0.1:{self.port}/{database}"

    def start(self, timeout: float = 30) -> None:
        self.process = subprocess.Popen(
            [self.binary, *self.run_as, str(self.prefix / "pgbouncer.ini")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        listening_wait(self.process, self.port, timeout, "pgbouncer", self.log)

    def show(self, what: str) -> list[dict[str, str]]:
        """A SHOW of PgBouncer's admin console (simple query protocol only, so through psql)."""
        run = subprocess.run(
            [
                "psql",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                "pgbouncer",
                "-A",
                "-F",
                "\t",
                "-P",
                "footer=off",
                "-c",
                f"SHOW {what}",
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
        header, *rows = run.stdout.splitlines()
        names = header.split("\t")
        return [dict(zip(names, row.split("\t"), strict=True)) for row in rows]

    def log(self) -> str:
        path = self.prefix / "pgbouncer.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            # SIGINT is PgBouncer's immediate shutdown.
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.prefix, ignore_errors=True)


class SlowClient(threading.Thread):
    """A client that sends a JSON POST whose body trickles in one byte every `interval` seconds, then reads
    the answer: it holds a connection for about `len(body) * interval` seconds, as the review's slow clients
    did."""

    def __init__(self, port: int, path: str, body: bytes, *, interval: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.path = path
        self.body = body
        self.interval = interval
        self.status: int | None = None
        self.error: str | None = None
        self.finished_at: float | None = None

    def run(self) -> None:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=120) as sock:
                head = (
                    f"POST {self.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(self.body)}\r\nConnection: close\r\n\r\n"
                )
                sock.sendall(head.encode("ascii"))
                for index in range(len(self.body)):
                    sock.sendall(self.body[index : index + 1])
                    time.sleep(self.interval)
                response = http.client.HTTPResponse(sock)
                response.begin()
                response.read()
                self.status = response.status
        except OSError as error:
            self.error = f"{type(error).__name__}: {error}"
        finally:
            self.finished_at = time.monotonic()

    @property
    def active(self) -> bool:
        return self.is_alive()
