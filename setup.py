"""Builds the package, compiling the engine (games/engine) with mypyc where a C compiler can build CPython
extensions; where none can, or with KINGSCORNER_ENGINE_COMPILE=0, the same modules install as pure Python. It
also builds the guides (docs/, mkdocs.yml) into the static site that the app serves under /docs/.

Everything else is declared in pyproject.toml. docs/architecture.md says why the engine is compiled and what
stays interpreted; docs/operations.md how the guides are built and served.
"""

import os
import sys
import sysconfig
import tempfile
import warnings
from pathlib import Path
from typing import Any

from setuptools import Command, Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
ENGINE = ROOT / "games" / "engine"
# Package markers re-export, and build.py switches to the pure modules when asked (so it must run before
# them); shapes.py declares TypedDicts whose annotations are read at run time; levels.py
# dispatches a computer turn, a few calls a turn, and is the seam tests observe by replacing its functions,
# which compiled callers would not see; simulate.py drives whole hands and reports. Their cost is in the
# modules they call.
INTERPRETED = {"__init__.py", "build.py", "levels.py", "shapes.py", "simulate.py"}


def engine_modules() -> list[str]:
    return sorted(
        str(path.relative_to(ROOT)) for path in ENGINE.rglob("*.py") if path.name not in INTERPRETED
    )


def can_build_extensions() -> bool:
    """Whether this machine's C compiler builds a CPython extension: a compiler alone is not enough without
    Python's headers."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler: Any = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "probe.c"
        source.write_text("#include <Python.h>\nint probe(void) { return Py_IsInitialized(); }\n")
        try:
            compiler.compile(
                [str(source)], output_dir=scratch, include_dirs=[sysconfig.get_paths()["include"]]
            )
        except Exception:  # noqa: BLE001 - any failure means: no compiled engine here
            return False
    return True


class OptionalBuildExt(build_ext):
    """Builds the compiled engine if it can; if the build fails anyway, the pure-Python modules serve."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # noqa: BLE001
            warnings.warn(f"the engine is not compiled ({error}); it runs as pure Python", stacklevel=1)

    def build_extension(self, ext: Any) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:  # noqa: BLE001
            warnings.warn(f"{ext.name} is not compiled ({error}); it runs as pure Python", stacklevel=1)


def compiled_engine() -> list[Any]:
    if os.environ.get("KINGSCORNER_ENGINE_COMPILE", "1") == "0":
        return []
    if not can_build_extensions():
        print(
            "no C compiler builds Python extensions here: the engine installs as pure Python", file=sys.stderr
        )
        return []
    from mypyc.build import mypycify

    # The project's mypy configuration loads the Django plugins, which the build does not install: an empty
    # --config-file reads none, and the engine, which imports nothing but the standard library, is checked
    # --strict as `mypy` checks it.
    return [
        *mypycify(
            ["--config-file=", "--strict", *engine_modules()],
            opt_level="3",
            debug_level="0",
        ),
        native_search(),
        native_moves(),
    ]


def native_search() -> Extension:
    """Sharp's search and play-outs in C (games/engine/players/_search_native.c), against the stable ABI.
    Floating-point contraction stays off: the balance must be computed in the same steps as search.py's, with
    no fused multiply-add (which some -march settings would let the compiler make), so that both choose
    alike."""
    return Extension(
        "games.engine.players._search_native",
        ["games/engine/players/_search_native.c"],
        depends=["games/engine/_cards.h"],
        py_limited_api=True,
        extra_compile_args=["-O3", "-ffp-contract=off"],
    )


def native_moves() -> Extension:
    """A position's legal moves and the shuffle in C (games/engine/_native.c), against the stable ABI."""
    return Extension(
        "games.engine._native",
        ["games/engine/_native.c"],
        depends=["games/engine/_cards.h"],
        py_limited_api=True,
        extra_compile_args=["-O3"],
    )


class BuildDocs(Command):
    """Builds docs/ with MkDocs (pinned in pyproject.toml's build requirements) into
    kingscorner/web_root/docs/, which WhiteNoise serves under /docs/ (settings WHITENOISE_ROOT): in the source
    tree for an editable install, as the compiled engine is, else into the package being built. Strict: a
    broken link or anchor fails the install, as it fails .ci/run."""

    description = "build the guides' static site with MkDocs"
    user_options: list[tuple[str, str | None, str]] = []

    def initialize_options(self) -> None:
        self.build_lib: str | None = None
        self.editable_mode = False

    def finalize_options(self) -> None:
        self.set_undefined_options("build_py", ("build_lib", "build_lib"))

    def site_dir(self) -> Path:
        package_root = ROOT if self.editable_mode or self.build_lib is None else Path(self.build_lib)
        return package_root / "kingscorner" / "web_root" / "docs"

    def run(self) -> None:
        from mkdocs.commands.build import build as mkdocs_build
        from mkdocs.config import load_config

        mkdocs_build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(self.site_dir()), strict=True))

    def get_outputs(self) -> list[str]:
        if self.editable_mode:
            return []
        return [str(path) for path in self.site_dir().rglob("*") if path.is_file()]

    def get_output_mapping(self) -> dict[str, str]:
        return {}


class BuildWithDocs(build):
    sub_commands = [*build.sub_commands, ("build_docs", None)]


setup(
    ext_modules=compiled_engine(),
    cmdclass={"build": BuildWithDocs, "build_docs": BuildDocs, "build_ext": OptionalBuildExt},
)
