"""Clients generated from the document the server serves, as their authors would make them: a Python client
by openapi-python-client plays a whole game and a daily hand against a live server, nothing but the generated
code speaking HTTP (the turns are planned by examples/client.py's planner, which sends nothing); TypeScript
types by openapi-typescript type-check examples/typescript/'s openapi-fetch client under `tsc --strict`.
Neither generator may warn about the document."""

import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.ci import IN_CI
from tests.support.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "kings_corner_api_client"
TYPESCRIPT = ROOT / "examples" / "typescript"


def _planner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_client", ROOT / "examples" / "client.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generated(live_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The Python client openapi-python-client generates from the live server's document."""
    out = tmp_path_factory.mktemp("generated-python")
    bin_dir = Path(sys.executable).parent
    result = subprocess.run(
        [str(bin_dir / "openapi-python-client"), "generate", "--url", f"{live_stack.base_url}/api/v1/schema/"]
        + ["--meta", "none", "--output-path", str(out / PACKAGE)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        # Its post-hooks format the code with the ruff of this environment.
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    # It says only what it generates: no warning, nothing it could not read.
    assert [line for line in said.splitlines() if line.strip()] == [f"Generating {out / PACKAGE}"], said
    sys.path.insert(0, str(out))
    try:
        yield out / PACKAGE
    finally:
        sys.path.remove(str(out))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def _module(name: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.{name}")


def test_the_generated_python_client_has_one_error_type(generated: Path) -> None:
    models = {path.stem for path in (generated / "models").glob("*.py")}
    assert {"problem", "problem_with_current", "problem_with_move_index"} <= models
    # No model of a problem per operation and status (the allOf of each problem response made 479 of them).
    assert [name for name in models if re.search(r"_response_[45]\d\d", name)] == []
    modules = list(generated.rglob("*.py"))
    print(f"openapi-python-client generated {len(modules)} modules, {len(models) - 1} models")
    assert len(modules) < 300


def _play(client: Any, game: Any, plan_turn: Any) -> Any:
    """Plays the game to its end through the generated client: a whole turn a request, each next hand
    dealt."""
    models = _module("models")
    moves_api, hands_api = _module("api.games.games_moves"), _module("api.games.games_hands_deal")
    for _ in range(500):
        if game.status == models.GameViewStatus.FINISHED:
            return game
        if game.status == models.GameViewStatus.HAND_OVER:
            body = models.GameHandDealInputRequest(expected_version=game.version)
            game = hands_api.sync(game_id=game.id, client=client, body=body)
        else:
            moves = plan_turn(game.rules.to_dict(), game.hand, game.table.piles.to_dict())
            body = models.GameMovesInputRequest.from_dict({"moves": moves, "expected_version": game.version})
            game = moves_api.sync(game_id=game.id, client=client, body=body)
        assert isinstance(game, models.GameView), game
    pytest.fail("the game did not end within 500 requests")


def test_the_generated_python_client_plays_a_game_and_a_daily_hand(
    live_stack: Stack, generated: Path
) -> None:
    package, models = _module("client"), _module("models")
    plan_turn = _planner().plan_turn
    anonymous = package.Client(base_url=live_stack.base_url, raise_on_unexpected_status=True)
    player = _module("api.players.players_create").sync(
        client=anonymous, body=models.PlayerCreateInputRequest(name="Generated")
    )
    assert isinstance(player, models.PlayerTokenOutput), player
    client = package.AuthenticatedClient(
        base_url=live_stack.base_url, token=player.token, raise_on_unexpected_status=True
    )

    created = _module("api.games.games_create").sync(
        client=client,
        body=models.GameCreateInputRequest(
            opponents=3, level=models.GameCreateInputRequestLevel.NORMAL, target_score=30
        ),
    )
    assert isinstance(created, models.GameView), created
    game = _play(client, created, plan_turn)
    assert max(seat.score for seat in game.players) >= 30 and game.winners

    deal = _module("api.daily.daily_today").sync(client=client)
    assert isinstance(deal, models.DailyDealForPlayerOutput), deal
    attempt = _module("api.daily.daily_attempt_create").sync(day=deal.date, client=client)
    assert isinstance(attempt, models.DailyAttemptOutput), attempt
    assert attempt.ranked
    hand = _play(client, attempt.game, plan_turn).hand_result
    standing = _module("api.daily.daily_leaderboard_me").sync(day=deal.date, client=client)
    assert isinstance(standing, models.DailyLeaderboardMeOutput), standing
    # The daily result, by the rules: the others' penalties if you went out first, else minus your own.
    mine = hand.out_seat == 0
    expected = sum(hand.penalties[1:]) if mine else -hand.penalties[0]
    assert standing.result == expected

    # A refusal is the one Problem type, its code one of the operation's.
    again = _module("api.daily.daily_leaderboard_me").sync(day=deal.date, client=anonymous)
    assert isinstance(again, models.Problem) and again.code == "not_authenticated"


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        if IN_CI:
            pytest.fail("CI type-checks the TypeScript example, which needs npm (Node.js)")
        pytest.skip("needs npm (Node.js)")
    return npm


def test_the_typescript_example_type_checks_against_types_generated_from_the_document(
    live_stack: Stack, tmp_path: Path
) -> None:
    npm = _npm()
    example = tmp_path / "typescript"
    shutil.copytree(TYPESCRIPT, example, ignore=shutil.ignore_patterns("node_modules", "schema.d.ts"))
    env = {
        **os.environ,
        "NO_UPDATE_NOTIFIER": "1",
        "KINGSCORNER_SCHEMA": f"{live_stack.base_url}/api/v1/schema/",
    }

    def run(*args: str) -> str:
        result = subprocess.run(
            [npm, *args], cwd=example, capture_output=True, text=True, timeout=600, env=env, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout + result.stderr

    # The versions package-lock.json pins, exactly.
    run("ci", "--no-audit", "--no-fund")
    said = run("run", "--silent", "generate")
    assert (example / "src" / "schema.d.ts").is_file()
    assert not [line for line in said.splitlines() if "warn" in line.lower() or "⚠" in line], said
    run("run", "--silent", "check")
    # tsc --strict refuses a body the document does not allow.
    client = example / "src" / "client.ts"
    client.write_text(client.read_text().replace("expected_version: game.version", "expected_version: 'one'"))
    broken = subprocess.run(
        [npm, "run", "--silent", "check"], cwd=example, capture_output=True, text=True, timeout=600, env=env
    )
    assert broken.returncode != 0 and "error TS2322" in broken.stdout, broken.stdout
