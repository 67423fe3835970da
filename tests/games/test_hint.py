"""The hint (games/apis/hint.py): sharp's rest of the turn, and the guards other apps register."""

import pytest

from daily.errors import HintsRefusedInRankedAttempt
from games import hooks
from games.models import Game
from tests.support.games import SEED, SHARP_READS_THE_TABLE_SEED, Caller, sharps_turn, whole_turn
from tests.support.problems import assert_problem


@pytest.mark.parametrize("seed", [SEED, SHARP_READS_THE_TABLE_SEED])
def test_a_hint_is_sharps_rest_of_the_turn(caller: Caller, seed: str) -> None:
    view = caller.create_game(seed=seed)
    response = caller.get(f"/api/v1/games/{view['id']}/hint")
    assert response.status_code == 200
    assert response.json() == {"version": 1, "moves": sharps_turn(view)}


def test_a_hint_weighs_the_other_hands_as_sharp_does_not_a_fixed_threat(caller: Caller) -> None:
    view = caller.create_game(seed=SHARP_READS_THE_TABLE_SEED)
    hint = caller.get(f"/api/v1/games/{view['id']}/hint").json()["moves"]
    assert hint != whole_turn(view)


def test_a_hint_asks_the_hint_guards_first(caller: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(game: Game) -> None:
        raise HintsRefusedInRankedAttempt()

    monkeypatch.setattr(hooks, "_hint_guards", [refuse])
    view = caller.create_game()
    assert_problem(caller.get(f"/api/v1/games/{view['id']}/hint"), 403, "hints_refused_in_ranked_attempt")
