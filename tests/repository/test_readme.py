"""The README's walkthrough and docs/operations.md's admin commands, run as written against a live server, so
that they cannot rot."""

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
OPERATIONS = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
README_SERVER = "http://127.0.0.1:8000"


def _section(heading: str, document: str = README) -> str:
    start = document.index(f"\n## {heading}\n")
    end = document.find("\n## ", start + 1)
    return document[start : end if end != -1 else None]


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
    walkthrough = _section("Walkthrough with curl")
    commands = "\n".join(_blocks(walkthrough, "sh"))
    assert README_SERVER in commands and "$API/daily" in commands
    # Stricter than a reader's shell: any failing command, and any HTTP error status, stops the run. The
    # commands run from the repository's root as a reader's do (examples/verify_daily.py), writing nothing.
    script = (
        "set -euo pipefail\n"
        'curl() { command curl --fail-with-body --show-error "$@"; }\n'
        + commands.replace(README_SERVER, live_stack.base_url).replace(
            "python3 examples/", f"{sys.executable} examples/"
        )
    )
    result = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    out = result.stdout
    shown = "\n".join(_blocks(walkthrough, "text"))
    # The game has a fixed seed: the hands the README shows are the ones the server deals.
    shown_hands = re.findall(r'"hand": (\[[^\]]*\])', shown)
    assert len(shown_hands) == 2
    for hand in shown_hands:
        assert json.dumps(json.loads(hand), separators=(",", ":")) in out
    assert '"name":"Ada"' in out
    # Today's daily is ranked, and on the board (alone on a fresh server; this one other tests share).
    assert 'true\n{"rank":' in out
    standing = _json_at(out, '{"rank":')
    assert 1 <= standing["rank"] <= standing["count"] and not standing["closed"]
    history = _json_at(out, '{"history":')
    assert history["history"][0]["result"] == standing["result"]
    # The past day is the same on every server with the quick start's DAILY_SECRET: its revealed seed and
    # the verifier's lines are the README's, word for word.
    for line in shown.splitlines():
        if re.fullmatch(r"[0-9a-f]{64}", line) or line.startswith(("Trust: ", "Daily deal #", "VERIFIED")):
            assert f"{line}\n" in out, line
    # The table: the friend's seat is taken through the invitation's join.
    seats = _json_at(out, '[{"seat": 0')
    assert [seat["kind"] for seat in seats] == ["person", "person", "computer"] and seats[1]["you"]


def test_the_readme_is_short_and_its_environment_table_names_every_variable_the_code_reads() -> None:
    assert len(README.splitlines()) <= 250
    table = _section("Environment variables")
    named = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", table))
    sources = [
        ROOT / "kingscorner" / "settings.py",
        ROOT / "kingscorner" / "gunicorn_conf.py",
        ROOT / "games" / "engine" / "build.py",
    ]
    read = set()
    for source in sources:
        read |= set(re.findall(r'(?:env(?:\.\w+)?|environ\.get)\(\s*"([A-Z][A-Z0-9_]+)"', source.read_text()))
    assert len(read) > 40
    assert read - named == set()


def test_the_admin_commands_make_an_operator_who_can_sign_in(live_stack: Stack) -> None:
    block = _blocks(_section("The admin", OPERATIONS), "sh")[0].replace("\\\n", " ")
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
