"""The repository stands alone: no tracked file reads or mentions anything outside it, and CI runs the
README's test command as a new user would."""

import re
import subprocess
from pathlib import Path

from tests.support.quick_start import quick_start_commands

ROOT = Path(__file__).resolve().parents[2]

# What a reference to the rules' old home outside the repository looks like: a path component or a folder
# named shared (not Celery's shared_task, nor "a shared rank"), and the reference documents by name. The
# patterns are written so that their own source text does not match them.
OUTSIDE_REFERENCES = (
    re.compile(r"(?<![\w.-])shared(?:[/\\]|['\"]|\s+(?:folder|directory)\b)", re.IGNORECASE),
    re.compile(r"\b(?:RULES|STYLE)\.md\b"),
)
# Directories of a working copy that are not part of the repository (used when git is not at hand).
UNTRACKED_DIRS = {
    ".git",
    ".venv",
    "__pycache__",
    "staticfiles",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".schemathesis",
}


def _working_copy_files() -> list[Path]:
    """Every file of the working copy but the local tool and cache folders: the repository's files where git
    is not at hand (an unpacked archive)."""
    files = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if path.is_file() and not any(part in UNTRACKED_DIRS or part.endswith(".egg-info") for part in parts):
            files.append(path)
    return files


def _repository_files() -> list[Path]:
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return _working_copy_files()
    return [ROOT / name for name in listing.split("\0") if name]


def _outside_references(text: str) -> list[str]:
    return [match.group(0) for pattern in OUTSIDE_REFERENCES for match in pattern.finditer(text)]


def test_the_reference_check_catches_paths_and_names_outside_the_repository() -> None:
    # Written in pieces, so that this file does not mention what it looks for.
    assert _outside_references("../sha" + "red/vectors/deals.json")
    assert _outside_references('Path(root) / "sha' + 'red" / "vectors"')
    assert _outside_references("rules: RULES" + ".md in the sha" + "red folder")
    assert _outside_references("see STYLE" + ".md")


def test_the_reference_check_lets_ordinary_words_through() -> None:
    text = (
        "from celery import shared_task\n@shared_task\ndef job(): ...\n"
        "equal results share a rank; a shared lowest total; shared API pieces; docs/rules.md"
    )
    assert _outside_references(text) == []


def test_no_tracked_file_mentions_anything_outside_the_repository() -> None:
    files = _repository_files()
    assert ROOT / "docs" / "rules.md" in files
    found = {}
    for path in files:
        if not path.is_file():
            continue
        references = _outside_references(path.read_bytes().decode("utf-8", errors="replace"))
        if references:
            found[str(path.relative_to(ROOT))] = references
    assert found == {}


def test_without_git_the_check_reads_the_working_copy_without_its_local_folders() -> None:
    files = {str(path.relative_to(ROOT)) for path in _working_copy_files()}
    assert {"README.md", ".ci/run", "docs/rules.md", "tests/vectors/deals.json"} <= files
    assert not any(name.startswith((".venv/", ".git/")) or "__pycache__" in name for name in files)


def test_the_quick_start_is_two_commands_and_ci_runs_the_second_verbatim() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2
    # The first serves the API as the live server of tests/repository does: uvicorn, event streams included.
    assert commands[0].endswith(".venv/bin/uvicorn kingscorner.asgi:application --port 8000")
    assert commands[1].endswith(".venv/bin/python -m pytest")
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[1] in ci_lines
