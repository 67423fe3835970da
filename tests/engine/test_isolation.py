"""The engine is pure Python: importing it loads no part of Django."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_importing_the_engine_in_a_fresh_interpreter_loads_no_django_module() -> None:
    code = (
        "import json, sys\n"
        "import games.engine, games.engine.bench, games.engine.par\n"
        "print(json.dumps(sorted(name for name in sys.modules if name.startswith('django'))))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(completed.stdout) == []
