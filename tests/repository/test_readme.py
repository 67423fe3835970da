"""The README's walkthrough and admin commands, run as written against a live server, so that they cannot
rot."""

import http.cookiejar
import json
import re
import shutil
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.ci import IN_CI
from tests.support.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
README_SERVER = "http://127.0.0.1:8000"


def _section(heading: str) -> str:
    start = README.index(f"\n## {heading}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def _blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", section, re.DOTALL | re.MULTILINE)


def _json_at(out: str, opening: str) -> Any:
    """The last JSON document in `out` that starts with `opening` (curl prints responses back to back)."""
    return json.JSONDecoder().raw_decode(out, out.rindex(opening))[0]


def _require_curl() -> None:
    if shutil.which("curl") is None:
        if IN_CI:
            pytest.fail("curl is needed to run the README's walkthrough, and CI must run it")
        pytest.skip("curl is not installed")


def test_the_walkthrough_runs_as_written_against_a_live_server(live_stack: Stack, tmp_path: Path) -> None:
    _require_curl()
    commands = "\n".join(_blocks(_section("Walkthrough with curl"), "sh"))
    assert README_SERVER in commands and "$API/daily" in commands
    # Stricter than a reader's shell: any failing command, and any HTTP error status, stops the run.
    script = (
        "set -euo pipefail\n"
        'curl() { command curl --fail-with-body --show-error "$@"; }\n'
        + commands.replace(README_SERVER, live_stack.base_url)
    )
    result = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    out = result.stdout
    # The game has a fixed seed: the hands the README shows are the ones the server deals.
    shown_hands = re.findall(
        r'"hand": (\[[^\]]*\])', "\n".join(_blocks(_section("Walkthrough with curl"), "text"))
    )
    assert len(shown_hands) == 3
    for hand in shown_hands:
        assert json.dumps(json.loads(hand), separators=(",", ":")) in out
    assert '"name":"Ada"' in out and '"document":"' in out
    # The finished daily game's stream ends after its last event; a ticket's URL opens the game's stream.
    assert "event: game_over\ndata: {" in out
    ticket = _json_at(out, '{"ticket":')
    assert ticket["url"].startswith(f"{live_stack.base_url}/api/v1/games/")
    assert "/stream?ticket=" in ticket["url"]
    assert "# Kings in the Corner: the rules this API plays" in out
    standing = _json_at(out, '{"rank":')
    assert standing["count"] >= 1 and standing["rank"] >= 1
    history = _json_at(out, '{"history":')
    assert history["history"][0]["result"] == standing["result"]


def test_the_admin_commands_make_an_operator_who_can_sign_in(live_stack: Stack) -> None:
    block = _blocks(_section("The admin"), "sh")[0].replace("\\\n", " ")
    noninteractive = next(line for line in block.splitlines() if "--noinput" in line)
    subprocess.run(
        ["bash", "-c", noninteractive.replace(".venv/bin/python", sys.executable)],
        cwd=ROOT,
        env=live_stack.env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    settings_from_readme = dict(re.findall(r"(DJANGO_SUPERUSER_\w+)=('[^']*'|\S+)", noninteractive))
    username = settings_from_readme["DJANGO_SUPERUSER_USERNAME"]
    password = settings_from_readme["DJANGO_SUPERUSER_PASSWORD"].strip("'")

    cookies = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
    login = f"{live_stack.base_url}/admin/login/?next=/admin/"
    page = browser.open(login, timeout=30).read().decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert csrf is not None
    form = {
        "csrfmiddlewaretoken": csrf.group(1),
        "username": username,
        "password": password,
        "next": "/admin/",
    }
    request = urllib.request.Request(
        login, data=urllib.parse.urlencode(form).encode(), headers={"Referer": login}
    )
    with browser.open(request, timeout=30) as response:
        assert response.url == f"{live_stack.base_url}/admin/"
        assert "Kings Corner API administration" in response.read().decode()
