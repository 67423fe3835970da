"""The checkouts a benchmark compares: this one, and with `--baseline-ref REF` that commit, checked out for
the run as a git worktree in a temporary directory (removed at the end). Both run on this checkout's virtual
environment, each from its own directory with itself first on the import path (tests/support/stack.py).

The baseline's engine is built as this checkout's is: where this one runs compiled (games.engine.BUILD is
"mypyc"), the worktree's engine is compiled in place with mypyc before the run (about half a minute), so that
the computer players of both sides run at the same kind of speed; a worktree left as pure Python would make
every computer turn of the baseline several times slower. A commit from before the compiled engine runs as
pure Python, and the benchmark says so."""

import shutil
import subprocess
import sys
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
        if engine_build(ROOT) == "mypyc" and not engine_compile(path):
            print(
                f"note: the baseline's engine ({commit}) runs as pure Python: it did not compile",
                file=sys.stderr,
            )
        yield [this_checkout(), Checkout(f"baseline ({commit})", path, "baseline")]
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, capture_output=True)
        shutil.rmtree(temporary, ignore_errors=True)


def engine_build(root: Path) -> str:
    """The engine build a checkout imports: "mypyc" or "python"."""
    code = "import sys; sys.path.insert(0, sys.argv[1]); from games.engine import BUILD; print(BUILD)"
    found = subprocess.run(
        [sys.executable, "-S", "-c", code, str(root)], check=True, capture_output=True, text=True
    )
    return found.stdout.strip()


def engine_compile(root: Path) -> bool:
    """Compiles a worktree's engine in place with mypyc (its setup.py's build_ext); whether it took. A commit
    from before the compiled engine builds nothing, and its engine stays pure Python."""
    built = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=root, capture_output=True
    )
    return built.returncode == 0 and engine_build(root) == "mypyc"
