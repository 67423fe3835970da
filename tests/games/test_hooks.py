"""The hooks other apps register with games (games/hooks.py), as the move path runs them."""

import pytest

from games import hooks
from tests.support.games import SEED, Caller, play_to_the_end


def test_hooks_run_when_a_hand_ends_and_may_hide_the_seed(
    caller: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    ended: list[tuple[str, int, str]] = []
    monkeypatch.setattr(
        hooks, "_hand_over_hooks", [lambda g, s: ended.append((str(g.id), g.version, g.status))]
    )
    monkeypatch.setattr(hooks, "_seed_reveal_checks", [lambda g: False])
    view = play_to_the_end(caller, caller.create_game(seed=SEED, target_score=None))
    assert ended == [(view["id"], view["version"], "finished")]
    assert view["seed"] is None
