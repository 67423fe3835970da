"""The checkouts a benchmark compares: this one, and with `--baseline-ref REF` that commit, checked out for
the run as a git worktree in a temporary directory (removed at the end). Both run on this checkout's virtual
environment, each from its own directory with itself first on the import path (tests/support/stack.py)."""

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Checkout:
    label: str
    root: Path
    # A name to tell its databases from the other checkout's.
    slug: str


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def this_checkout() -> Checkout:
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = "+changes" if _git("status", "--porcelain", "--untracked-files=no") else ""
    return Checkout(f"this ({commit}{dirty})", ROOT, "this")


@contextmanager
def checkouts(baseline_ref: str | None) -> Iterator[list[Checkout]]:
    """[this checkout] or [this checkout, the baseline], the baseline's worktree removed on exit."""
    if baseline_ref is None:
        yield [this_checkout()]
        return
    commit = _git("rev-parse", "--short", f"{baseline_ref}^{{commit}}")
    temporary = Path(tempfile.mkdtemp(prefix="kingscorner-baseline-"))
    path = temporary / "checkout"
    _git("worktree", "add", "--detach", str(path), commit)
    try:
        yield [this_checkout(), Checkout(f"baseline ({commit})", path, "baseline")]
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, capture_output=True)
        shutil.rmtree(temporary, ignore_errors=True)
