"""Test and benchmark tooling: the README's quick-start commands, and its first command (the server) run as
written in a copy of the working copy, as a new user runs it: a new virtual environment, the default SQLite
database and no broker, with nothing of the test run's environment but what finds Python and the package
index."""

import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from tests.support.stack import free_port

ROOT = Path(__file__).resolve().parents[2]
README_PORT = "--port 8000"
# What a new user's shell has that the command needs: Python on the PATH, and pip's configuration and cache.
PASSED_ON = {"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "USER", "SSL_CERT_FILE"}
PASSED_ON_PREFIXES = ("PIP_",)


def quick_start_commands() -> list[str]:
    """The quick start's commands, one a line: the server, then the tests."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1]
    block = section.split("```", 2)[1]
    return [line for line in block.splitlines() if line.strip()]


def _repository_files() -> list[str]:
    """The working copy's files that git tracks or would (new ones not ignored), as they are on disk."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [name for name in listing.split("\0") if name and (ROOT / name).is_file()]


class QuickStart:
    """The quick start's first command, run as written (on a free port instead of 8000) in a copy of the
    working copy, which keeps its virtual environment and database from one run to the next."""

    def __init__(self) -> None:
        command = quick_start_commands()[0]
        assert command.count(README_PORT) == 1, command
        self.copy = Path(tempfile.mkdtemp(prefix="kingscorner-quick-start-"))
        for name in _repository_files():
            (self.copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, self.copy / name)
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.command = command.replace(README_PORT, f"--port {self.port}")
        self.log_path = self.copy / "quick-start.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, env: Mapping[str, str] | None = None, *, timeout: float = 900) -> None:
        """Runs the command with the server's environment `env` added, and waits until it serves."""
        environment = {
            name: value
            for name, value in os.environ.items()
            if name in PASSED_ON or name.startswith(PASSED_ON_PREFIXES)
        }
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                ["bash", "-c", self.command],
                cwd=self.copy,
                env={**environment, **(env or {})},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the quick start's command exited: {self.log()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/api/v1/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"the quick start did not serve within {timeout}s: {self.log()}")

    def stop(self) -> None:
        """Stops the server as Ctrl-C would (SIGINT to the command's process group)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def log(self) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        # pip's notes on the machine's own package index say nothing about the server.
        lines = [line for line in text.splitlines() if not line.startswith("WARNING: Location")]
        return "\n".join(lines)[-4000:]

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.copy, ignore_errors=True)
