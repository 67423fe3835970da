"""The engine is pure Python: importing it, computer players included, loads no part of Django."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_importing_every_engine_module_in_a_fresh_interpreter_loads_no_django_module() -> None:
    code = (
        "import importlib, json, pkgutil, sys\n"
        "import games.engine\n"
        "for module in pkgutil.walk_packages(games.engine.__path__, 'games.engine.'):\n"
        "    importlib.import_module(module.name)\n"
        "watched = ('django', 'games.engine.')\n"
        "print(json.dumps([name for name in sorted(sys.modules) if name.startswith(watched)]))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    )
    loaded = json.loads(completed.stdout)
    assert not [name for name in loaded if name.startswith("django")]
    # Every engine module was imported, so a Django import anywhere in the engine would have shown.
    assert {"games.engine.par", "games.engine.build", "games.engine.players.montecarlo"} <= set(loaded)
    assert "games.engine.players.simulate" in loaded
