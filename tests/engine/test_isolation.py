"""The engine is pure Python: importing it, computer players included, loads no part of Django."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_importing_the_engine_and_its_players_in_a_fresh_interpreter_loads_no_django_module() -> None:
    code = (
        "import importlib, json, pkgutil, sys\n"
        "import games.engine, games.engine.bench, games.engine.players\n"
        "for module in pkgutil.iter_modules(games.engine.players.__path__):\n"
        "    importlib.import_module('games.engine.players.' + module.name)\n"
        "watched = ('django', 'games.engine.players.')\n"
        "print(json.dumps([name for name in sorted(sys.modules) if name.startswith(watched)]))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    )
    loaded = json.loads(completed.stdout)
    assert not [name for name in loaded if name.startswith("django")]
    assert "games.engine.players.montecarlo" in loaded and "games.engine.players.simulate" in loaded
