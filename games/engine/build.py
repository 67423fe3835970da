"""Which build of the engine runs: its modules as mypyc compiled them at install (setup.py), or as pure Python
where nothing was compiled, where a source changed after it was compiled, or where KINGSCORNER_ENGINE=python
asks for it. Both make the same choices; `.ci/run` checks that move for move."""

import os
import sys
import warnings
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import (
    EXTENSION_SUFFIXES,
    SOURCE_SUFFIXES,
    FileFinder,
    ModuleSpec,
    PathFinder,
    SourceFileLoader,
)
from pathlib import Path
from types import ModuleType

ENGINE = __name__.rpartition(".")[0]


class PurePythonEngine(MetaPathFinder):
    """Finds the engine's modules among its .py files only, passing over the compiled ones beside them."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith(ENGINE + ".") or path is None:
            return None
        for directory in path:
            spec = FileFinder(directory, (SourceFileLoader, SOURCE_SUFFIXES)).find_spec(fullname)
            if spec is not None:
                return spec
        return None


def _stale(directories: Sequence[str]) -> list[str]:
    """In a source checkout (an editable install, or `setup.py build_ext --inplace`), the compiled modules'
    sources (the .py mypyc compiled, or a C extension's .c and the card tables' header it includes) that
    changed after they were built. An installed wheel is never stale."""
    root = Path(directories[0]).parents[1]
    if not (root / "setup.py").exists():
        return []
    built = max((library.stat().st_mtime for library in root.glob("*__mypyc.*")), default=0.0)
    stale = []
    for directory in directories:
        for compiled in Path(directory).rglob("*"):
            if not compiled.name.endswith(tuple(EXTENSION_SUFFIXES)):
                continue
            stem = compiled.name.partition(".")[0]
            sources = [compiled.with_name(stem + ".py"), compiled.with_name(stem + ".c")]
            if sources[1].exists():
                # The C extensions' shared card tables.
                sources.append(root / "games" / "engine" / "_cards.h")
            for source in sources:
                if source.exists() and source.stat().st_mtime > max(built, compiled.stat().st_mtime):
                    stale.append(str(source))
    return stale


def _use_pure_python() -> None:
    if not any(isinstance(finder, PurePythonEngine) for finder in sys.meta_path):
        sys.meta_path.insert(0, PurePythonEngine())


def _build() -> str:
    if os.environ.get("KINGSCORNER_ENGINE") == "python":
        _use_pure_python()
        return "python"
    # The engine package is importing this module, so its path is known.
    path = sys.modules[ENGINE].__path__
    spec = PathFinder.find_spec(f"{ENGINE}.cards", path)
    if spec is None or str(spec.origin).endswith(".py"):
        return "python"
    stale = _stale(path)
    if stale:
        # Compiled and edited modules together would be neither build: all run from source instead.
        warnings.warn(
            f"the compiled engine is older than {', '.join(stale)}: the engine runs as pure Python until "
            "`pip install -e .` compiles it again",
            stacklevel=1,
        )
        _use_pure_python()
        return "python"
    return "mypyc"


# "mypyc" when the engine's modules run compiled, "python" when they run as pure Python.
BUILD = _build()
