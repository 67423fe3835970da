"""What a load costs the machine, for the capacity model (docs/scaling.md): the CPU seconds of the web
server's processes and of the PostgreSQL backends serving its database, sampled from /proc (this machine
only), and the rows and commits that database counted."""

import os
import threading
import time
from pathlib import Path

import psycopg

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds in user and kernel mode) of a live process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS


class CpuSampler(threading.Thread):
    """Every half second, the CPU seconds so far of the gunicorn master `web_pid` and its workers, and of the
    PostgreSQL backends connected to `database`; each process's last sample counts (a process that exits
    loses at most its last half second), from its first sample for one that ran before `start`."""

    def __init__(self, web_pid: int, server_url: str, database: str) -> None:
        super().__init__(daemon=True)
        self.web_pid = web_pid
        self.server_url = server_url
        self.database = database
        self.first: dict[tuple[str, int], float] = {}
        self.last: dict[tuple[str, int], float] = {}
        self.halt = threading.Event()
        self.started_once = False

    def _sample(self, connection: psycopg.Connection) -> None:
        web = [self.web_pid]
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                stat = _stat(int(entry.name))
                if stat is not None and stat[0] == self.web_pid:
                    web.append(int(entry.name))
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s", [self.database]
        ).fetchall()
        for kind, pids in (("web", web), ("database", [row[0] for row in rows])):
            for pid in pids:
                stat = _stat(pid)
                if stat is None:
                    continue
                key = (kind, pid)
                # A process first seen after the first sample started during the run: all its CPU counts.
                self.first.setdefault(key, stat[1] if not self.started_once else 0.0)
                self.last[key] = stat[1]
        self.started_once = True

    def run(self) -> None:
        with psycopg.connect(self.server_url, autocommit=True) as connection:
            while not self.halt.is_set():
                self._sample(connection)
                self.halt.wait(0.5)
            self._sample(connection)

    def stop(self) -> dict[str, float]:
        self.halt.set()
        self.join()
        totals = {"web": 0.0, "database": 0.0}
        for key, seconds in self.last.items():
            totals[key[0]] += seconds - self.first[key]
        return totals


def database_counts(server_url: str, database_url: str, database: str) -> dict[str, int]:
    """The transactions committed in `database` (each autocommitted read is one) and the rows inserted and
    updated in each of its tables, as PostgreSQL's statistics count them (a backend reports its own when its
    transaction ends or it exits)."""
    with psycopg.connect(server_url, autocommit=True) as connection:
        counts = {
            "transactions": int(
                connection.execute(
                    "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", [database]
                ).fetchone()[0]  # type: ignore[index]
            )
        }
    with psycopg.connect(database_url, autocommit=True) as connection:
        for table, inserted, updated in connection.execute(
            "SELECT relname, n_tup_ins, n_tup_upd FROM pg_stat_user_tables"
        ).fetchall():
            if inserted:
                counts[f"{table} inserted"] = int(inserted)
            if updated:
                counts[f"{table} updated"] = int(updated)
    return counts


def pause_for_statistics() -> None:
    """PostgreSQL's backends report their statistics at most once a second, and a closed one at its exit."""
    time.sleep(1.5)
