"""The image's layout without a Docker engine (none runs in CI): the wheel the Dockerfile's first stage
builds, installed on its own and run from a directory that holds only manage.py, as the second stage runs
it. It carries the compiled engine, the guides' site and the web client's static files, and the service runs
from it (not from a source tree beside it)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, os
import django
django.setup()
import games.engine, kingscorner
from games.engine import deal, game
from games.engine.players import rollout, search
from django.conf import settings
from django.test import Client
client = Client()
print(json.dumps({
    "build": games.engine.BUILD,
    "native_search": search.NATIVE is not None,
    "native_play_out": rollout.NATIVE_PLAY_OUT is not None,
    "native_moves": game.NATIVE_POSITION_MOVES is not None and deal.NATIVE_SHUFFLE is not None,
    "engine": games.engine.__file__,
    "kingscorner": kingscorner.__file__,
    "docs": client.get("/docs/").status_code,
    "play": client.get("/play/").status_code,
    "static": os.path.isfile(os.path.join(settings.STATIC_ROOT, "web", "css", "app.css")),
}))
"""


def test_the_dockerfile_stages_build_the_compiled_engine_into_the_wheel_the_image_runs() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "FROM python:3.11-slim AS build" in dockerfile
    assert "gcc" in dockerfile and "pip wheel --no-deps --wheel-dir /wheels ." in dockerfile
    assert "COPY --from=build /wheels /wheels" in dockerfile and "pip install /wheels/*.whl" in dockerfile
    assert "engine.BUILD == 'mypyc'" in dockerfile
    assert "search.NATIVE is not None" in dockerfile
    assert "game.NATIVE_POSITION_MOVES and deal.NATIVE_SHUFFLE" in dockerfile
    # The runtime stage copies no source package: its modules would shadow the installed, compiled ones.
    runtime = dockerfile.rpartition("FROM python:3.11-slim")[2]
    assert "COPY games" not in runtime and "COPY kingscorner" not in runtime


def _pip(*arguments: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", *arguments], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.slow
def test_the_wheel_installed_alone_runs_the_compiled_engine_and_serves_the_site(tmp_path: Path) -> None:
    wheels, target, app = tmp_path / "wheels", tmp_path / "site-packages", tmp_path / "app"
    app.mkdir()
    _pip("wheel", "--no-deps", "--wheel-dir", str(wheels), str(ROOT))
    (wheel,) = wheels.glob("kingscorner_api-*.whl")
    _pip("install", "--no-deps", "--target", str(target), str(wheel))
    (app / "manage.py").write_bytes((ROOT / "manage.py").read_bytes())
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("KINGSCORNER_", "PYTEST"))
    }
    environment.update(
        {
            "PYTHONPATH": str(target),
            "DJANGO_SETTINGS_MODULE": "kingscorner.settings",
            "SECRET_KEY": "image-test",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "REDIS_URL": "",
            "ALLOWED_HOSTS": "testserver",
        }
    )
    collect = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=app,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert collect.returncode == 0, collect.stderr[-3000:]
    probe = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=app, env=environment, capture_output=True, text=True, timeout=300
    )
    assert probe.returncode == 0, probe.stderr[-3000:]
    found = json.loads(probe.stdout.strip().splitlines()[-1])
    if found["build"] != "mypyc" and not os.environ.get("CI"):
        pytest.skip("no C compiler builds Python extensions here: the wheel holds the pure-Python engine")
    assert found["build"] == "mypyc" and found["native_search"] and found["native_play_out"], found
    assert found["native_moves"], found
    assert found["engine"].startswith(str(target)) and found["kingscorner"].startswith(str(target)), found
    assert found["docs"] == 200 and found["play"] == 200 and found["static"], found
