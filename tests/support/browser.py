"""Browser tests' launcher: Playwright for Python driving Debian's chromium (Playwright cannot download its
own browsers here, so it is pointed at the `chromium` on the PATH), headless, with the flags that keep
a closed network quiet, and a folder for the screenshots each test saves as its artifacts."""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
# .ci/run prints this folder; BROWSER_ARTIFACTS moves it.
ARTIFACTS = Path(os.environ.get("BROWSER_ARTIFACTS", ROOT / ".artifacts" / "browser"))

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def chromium_required() -> str:
    """The chromium binary; under CI its absence fails the test, elsewhere it skips it."""
    path = chromium_path()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed")
    return path


@contextmanager
def chromium() -> Iterator[Browser]:
    executable = chromium_required()
    with sync_playwright() as playwright:
        browser = launch(playwright, executable)
        try:
            yield browser
        finally:
            browser.close()


def launch(playwright: Playwright, executable: str) -> Browser:
    return playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)


def artifact_path(test: str, name: str) -> Path:
    folder = ARTIFACTS / test
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{name}.png"
