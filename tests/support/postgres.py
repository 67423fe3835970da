"""Test and benchmark tooling: a PostgreSQL server of a test's own (initdb and postgres from the machine's
package, in a temporary directory, on a free port), which the test may hang with SIGSTOP and resume with
SIGCONT without touching the machine's shared server."""

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

from tests.support.stack import free_port

# initdb and postgres refuse to run as root; Debian's package has this user.
SERVER_USER = "postgres"


def server_binaries() -> Path | None:
    """The newest /usr/lib/postgresql/<version>/bin holding initdb and postgres, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda path: int(Path(path).parts[4]))
    return Path(found[-1]).parent if found else None


class PrivatePostgres:
    """One PostgreSQL server in a temporary directory, its processes in one process group (the postmaster's),
    so that `freeze` stops every one of them at once, as a hung host would."""

    def __init__(self) -> None:
        binaries = server_binaries()
        if binaries is None:
            raise RuntimeError("PostgreSQL's server binaries are not installed (/usr/lib/postgresql/*/bin)")
        self.binaries = binaries
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="kingscorner-postgres-"))
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"
        self.process: subprocess.Popen[bytes] | None = None
        owner = pwd.getpwnam(SERVER_USER) if os.geteuid() == 0 else None
        self._user = SERVER_USER if owner is not None else None
        if owner is not None:
            os.chown(self.directory, owner.pw_uid, owner.pw_gid)

    def start(self, timeout: float = 60) -> None:
        data = self.directory / "data"
        subprocess.run(
            [str(self.binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
            check=True,
            capture_output=True,
            user=self._user,
        )
        with open(self.directory / "server.log", "ab") as log:
            self.process = subprocess.Popen(
                [
                    str(self.binaries / "postgres"),
                    "-D",
                    str(data),
                    "-p",
                    str(self.port),
                    "-k",
                    str(self.directory),
                    "-c",
                    "listen_addresses=127.0.0.1",
                    "-c",
                    "fsync=off",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                user=self._user,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited: {self.log()}")
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                time.sleep(0.2)
        raise RuntimeError(f"postgres did not answer within {timeout}s: {self.log()}")

    def _children(self) -> list[int]:
        # Each backend calls setsid(), so the postmaster's process group holds it alone: its children are
        # found by their parent.
        assert self.process is not None
        children = []
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                fields = Path(stat).read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.process.pid:
                children.append(int(Path(stat).parent.name))
        return children

    def freeze(self) -> None:
        """SIGSTOP to the postmaster, then to every backend (none can be forked once it is stopped):
        connections stay open and the kernel accepts new ones, but nothing answers."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)
        for pid in self._children():
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.process is not None
        for pid in self._children():
            os.kill(pid, signal.SIGCONT)
        os.kill(self.process.pid, signal.SIGCONT)

    def log(self) -> str:
        path = self.directory / "server.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.thaw()
            # SIGINT is PostgreSQL's fast shutdown.
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)
