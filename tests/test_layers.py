"""The rooms of the house keep to their doors, read from the source (every import statement, those inside
functions too): HTTP stays in the apps' apis/ packages, the API's shared pieces know no app, the web client
knows nothing of the API's code, no module imports itself round a circle, and the games services stay small
enough to read."""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("games", "daily", "kingscorner", "web")
# The frameworks of HTTP, which only an app's apis/ package (its views, serializers, URLs) imports. The admin
# site is Django's own web interface: its links are reversed URLs.
HTTP_MODULES = ("rest_framework", "django.urls")
HTTP_ALLOWED = {"games.admin", "daily.admin"}
SERVICES_MODULE_LINES = 400
SERVICES_FUNCTION_LINES = 60


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    """The product's modules by name (migrations are generated, and import nothing of ours that matters),
    a C extension's by its stub (games/engine/players/_search_native.pyi), which names what it offers."""
    return {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py*"))
        if path.suffix in (".py", ".pyi")
        and not (path.suffix == ".pyi" and path.with_suffix(".py").exists())
        and "migrations" not in path.parts
    }


SOURCES = _sources()


def _imported(module: str, path: Path) -> Iterator[str]:
    """Every module name `module` imports, wherever the statement is: `from a.b import c` names a.b.c when
    that is a module, else a.b."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield candidate if candidate in SOURCES else base


IMPORTS = {module: sorted(set(_imported(module, path))) for module, path in SOURCES.items()}


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def test_no_module_of_the_apps_outside_their_apis_imports_http() -> None:
    offending = {
        module: [name for name in imported if _within(name, HTTP_MODULES)]
        for module, imported in IMPORTS.items()
        if module.split(".")[0] in ("games", "daily")
        and "apis" not in module.split(".")
        and module not in HTTP_ALLOWED
    }
    assert {module: names for module, names in offending.items() if names} == {}


def test_the_apis_shared_pieces_import_no_app() -> None:
    offending = {
        module: [name for name in imported if _within(name, ("games", "daily"))]
        for module, imported in IMPORTS.items()
        if _within(module, ("kingscorner.api",))
    }
    assert {module: names for module, names in offending.items() if names} == {}


def test_the_web_client_imports_nothing_of_the_api_or_its_apps() -> None:
    """web/ serves page shells only: what its pages show they read over HTTP, as any client would, so no
    module of it imports the apps, the API's pieces or the project's settings beyond Django's."""
    offending = {
        module: [name for name in imported if _within(name, ("games", "daily", "kingscorner"))]
        for module, imported in IMPORTS.items()
        if _within(module, ("web",))
    }
    assert IMPORTS["web.views"] and {module: names for module, names in offending.items() if names} == {}


def _cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing itself) in the graph
    of the product's imports of its own modules (Tarjan's algorithm)."""
    graph = {module: [name for name in imported if name in SOURCES] for module, imported in IMPORTS.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for name in graph[module]:
            if name not in index:
                visit(name)
                low[module] = min(low[module], low[name])
            elif name in on_stack:
                low[module] = min(low[module], index[name])
        if low[module] == index[module]:
            component = []
            while True:
                name = stack.pop()
                on_stack.discard(name)
                component.append(name)
                if name == module:
                    break
            if len(component) > 1 or module in graph[module]:
                found.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    return found


def test_no_modules_import_each_other_round_a_circle_not_even_inside_a_function() -> None:
    assert _cycles() == []


def test_a_c_extension_is_a_module_of_its_own_not_its_package() -> None:
    """search.py and rollout.py import the C search and play-outs from their own package (`from
    games.engine.players import _search_native`): an edge to the extension, which imports nothing of ours,
    not to the package, whose __init__ leads back to them."""
    assert "games.engine.players._search_native" in SOURCES
    assert "games.engine.players._search_native" in IMPORTS["games.engine.players.search"]
    assert "games.engine.players._search_native" in IMPORTS["games.engine.players.rollout"]
    assert IMPORTS["games.engine.players._search_native"] == ["collections.abc", "typing"]
    # game.py lists the legal moves, deal.py shuffles and players/turns.py plays easy's turn with the C
    # extension, which knows the moves' types and nothing else of ours.
    assert "games.engine._native" in IMPORTS["games.engine.game"]
    assert "games.engine._native" in IMPORTS["games.engine.deal"]
    assert "games.engine._native" in IMPORTS["games.engine.players.turns"]
    assert IMPORTS["games.engine._native"] == ["collections.abc", "games.engine.moves", "typing"]


def test_the_cycle_finder_finds_a_function_level_import_back() -> None:
    """The check above can fail: the services importing the tasks inside a function, as they once did, is a
    circle (the tasks import the services)."""
    IMPORTS["games.services.clock"].append("games.tasks")
    try:
        assert ["games.services", "games.services.clock", "games.tasks"] in _cycles()
    finally:
        IMPORTS["games.services.clock"].remove("games.tasks")


SERVICES = sorted((REPO / "games" / "services").glob("*.py"))


@pytest.mark.parametrize("path", SERVICES, ids=lambda path: path.name)
def test_a_services_module_is_short_and_so_are_its_functions(path: Path) -> None:
    text = path.read_text()
    assert len(text.splitlines()) <= SERVICES_MODULE_LINES
    long = {
        node.name: node.end_lineno - node.lineno + 1
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > SERVICES_FUNCTION_LINES
    }
    assert long == {}


def test_a_game_is_saved_by_one_function() -> None:
    """Only games.services.writes.game_write calls the save statement (persistence.game_save) or saves a
    game's row itself."""
    savers = set()
    for path in SERVICES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                calls = {
                    ast.unparse(call.func)
                    for call in ast.walk(node)
                    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                }
                if calls & {"persistence.game_save", "game.save", "GameEvent.objects.bulk_create"}:
                    savers.add(f"{path.stem}.{node.name}")
    assert savers == {"writes.game_write"}
