"""The turn clock: a person's turn past its deadline is played for them at normal by a Celery task (queued
after the write that began the turn, with that write's version) or by the beat job that catches up, exactly
once even when the person moves at the same instant. Time is not waited for here: a deadline is moved into
the past, as time would."""

import queue
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import pytest
from django.utils import timezone

from games import scheduling, services, tasks
from games.engine import State
from games.engine.players import computer_turn
from games.errors import VersionConflict
from games.models import Game, GameEvent, Player
from kingscorner.celery import app
from tests.support.games import Caller, new_caller
from tests.support.races import race, split

SEED = "5e" * 32


def _clocked_game(caller: Caller, **body: Any) -> dict[str, Any]:
    return dict(caller.create_game(opponents=2, turn_seconds=30, seed=SEED, **body))


def _run_out(game_id: str) -> int:
    """Moves the game's deadline into the past, as time would; its version."""
    game = Game.objects.get(id=game_id)
    assert game.turn_deadline is not None
    Game.objects.filter(id=game_id).update(turn_deadline=timezone.now() - timedelta(seconds=1))
    return int(game.version)


def _events_at(game_id: str, version: int) -> list[dict[str, Any]]:
    rows = GameEvent.objects.filter(game_id=game_id, version=version).order_by("seq")
    return [{"type": row.type, **row.data} for row in rows]


@pytest.mark.django_db
def test_a_turn_past_its_deadline_is_played_at_normal_and_the_log_says_so(caller: Caller) -> None:
    game = _clocked_game(caller)
    assert game["turn_seconds"] == 30 and game["turn_deadline"] is not None
    version = _run_out(game["id"])
    before = State.from_json(Game.objects.get(id=game["id"]).state)
    decision, _ = computer_turn(before, "normal", bytes.fromhex(before.seed))

    assert services.turn_time_out(game_id=game["id"], version=version)

    events = _events_at(game["id"], version + 1)
    assert events[0] == {"type": "turn_timed_out", "seat": 0}
    played = [event for event in events[1:] if event["type"] in ("play", "move_pile", "end_turn")]
    assert [event["seat"] for event in played[: len(decision.moves)]] == [0] * len(decision.moves)
    assert played[len(decision.moves) - 1]["type"] == "end_turn"
    after = caller.get(f"/api/v1/games/{game['id']}?since_version={version}").json()
    assert after["version"] == version + 1
    assert [event["type"] for event in after["events"]][0] == "turn_timed_out"
    # The computers played on to the person's next turn, which is on the clock again.
    assert after["is_your_turn"] and after["turn_deadline"] is not None


@pytest.mark.django_db
def test_the_clock_leaves_a_turn_alone_before_its_deadline_or_once_the_game_moved_on(caller: Caller) -> None:
    game = _clocked_game(caller)
    assert not services.turn_time_out(game_id=game["id"], version=game["version"])
    version = _run_out(game["id"])
    assert not services.turn_time_out(game_id=game["id"], version=version - 1)
    assert not services.turn_time_out(game_id=game["id"], version=version + 1)
    unclocked = caller.create_game(opponents=1)
    assert not services.turn_time_out(game_id=unclocked["id"], version=unclocked["version"])
    assert Game.objects.get(id=game["id"]).version == version
    assert not GameEvent.objects.filter(type="turn_timed_out").exists()


def _each_once(actions: list[Callable[[], Any]]) -> Callable[[], Any]:
    """What each racer runs: the next of `actions`, so that each runs once."""
    return lambda: actions.pop()()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_clock_firing_while_the_person_moves_applies_exactly_one_of_them() -> None:
    caller = new_caller()
    player = Player.objects.get(id=caller.player_id)
    for _ in range(8):
        game = _clocked_game(caller)
        version = _run_out(game["id"])
        turns: list[Callable[[], Any]] = [
            partial(services.turn_time_out, game_id=game["id"], version=version),
            partial(
                services.game_moves_apply,
                game_id=game["id"],
                player=player,
                moves=[{"type": "end_turn"}],
                expected_version=version,
            ),
        ]
        values, errors = split(race(2, _each_once(turns)))
        timed_out = GameEvent.objects.filter(game_id=game["id"], type="turn_timed_out").count()
        assert Game.objects.get(id=game["id"]).version == version + 1
        if timed_out:
            # The clock won: the person's move found another version, and the clock's write is the only one.
            assert [type(error) for error in errors] == [VersionConflict] and values == [True]
        else:
            # The move won: the clock found the game moved on and did nothing.
            assert errors == [] and len(values) == 2 and False in values
            assert any(isinstance(value, services.GameChange) for value in values)
        person_moves = [event for event in _events_at(game["id"], version + 1) if event.get("seat") == 0]
        assert [event["type"] for event in person_moves].count("end_turn") == 1


@pytest.mark.django_db
def test_a_worker_that_was_down_catches_up_with_the_beat_job_and_plays_each_turn_once(caller: Caller) -> None:
    # No task ran (tasks run in-process here, where none is queued): as if the worker had been down past
    # these deadlines.
    games = [_clocked_game(caller) for _ in range(3)]
    for game in games[:2]:
        _run_out(game["id"])
    assert tasks.turn_clocks_catch_up.delay().get() == 2
    assert tasks.turn_clocks_catch_up.delay().get() == 0
    timed_out = set(GameEvent.objects.filter(type="turn_timed_out").values_list("game_id", flat=True))
    assert {str(game_id) for game_id in timed_out} == {games[0]["id"], games[1]["id"]}


@pytest.mark.django_db
def test_a_write_that_starts_a_persons_clocked_turn_queues_its_timeout_once_committed(
    caller: Caller,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    queued: list[tuple[str, int, datetime]] = []
    monkeypatch.setattr(app.conf, "task_always_eager", False)
    monkeypatch.setattr(scheduling, "turn_time_out_queue", lambda *args: queued.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        game = _clocked_game(caller)
    stored = Game.objects.get(id=game["id"])
    assert queued == [(game["id"], stored.version, stored.turn_deadline)]
    with django_capture_on_commit_callbacks(execute=True):
        after = caller.moves(game, [{"type": "end_turn"}]).json()
    stored = Game.objects.get(id=game["id"])
    assert after["version"] == stored.version
    assert queued[-1] == (game["id"], stored.version, stored.turn_deadline)
    # A table without a clock queues nothing.
    with django_capture_on_commit_callbacks(execute=True):
        caller.create_game(opponents=1)
    assert len(queued) == 2


def test_the_clocks_tasks_are_sent_from_a_thread_that_outlives_a_broker_that_refuses_them(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    sent: queue.SimpleQueue[tuple[list[Any], datetime]] = queue.SimpleQueue()

    def send_task(name: str, *, args: list[Any], eta: datetime, retry: bool) -> None:
        assert name == tasks.turn_time_out.name
        if args[0] == "refused":
            raise ConnectionRefusedError("the broker is away")
        sent.put((args, eta))

    monkeypatch.setattr(app, "send_task", send_task)
    # A warning at most once a minute: none was given lately.
    monkeypatch.setattr(scheduling._clock_sender, "_warned_at", -1e9)
    deadline = timezone.now()
    scheduling.turn_time_out_queue("refused", 3, deadline)
    scheduling.turn_time_out_queue("game", 4, deadline)
    assert sent.get(timeout=30) == (["game", 4], deadline)
    assert "could not be queued" in caplog.text


@pytest.mark.django_db
def test_a_timed_out_person_at_a_table_of_two_people_hands_the_turn_on(caller: Caller) -> None:
    eve = new_caller("Eve")
    table = caller.create_game(
        seats=[{"kind": "person"}, {"kind": "person"}], turn_seconds=60, seed=SEED, target_score=None
    )
    joined = eve.post(f"/api/v1/invitations/{table['invitation']['code']}")
    assert joined.status_code == 200, joined.content
    view = caller.get(f"/api/v1/games/{table['id']}").json()
    to_move = view["current_seat"]
    version = _run_out(table["id"])
    assert services.turn_time_out(game_id=table["id"], version=version)
    events = _events_at(table["id"], version + 1)
    assert events[0] == {"type": "turn_timed_out", "seat": to_move}
    after = caller.get(f"/api/v1/games/{table['id']}").json()
    assert after["status"] == "playing"
    assert after["current_seat"] == 1 - to_move and after["turn_deadline"] is not None


@pytest.mark.django_db
def test_a_retried_move_answers_with_the_first_responses_deadline_to_the_byte(caller: Caller) -> None:
    """The view stored for an Idempotency-Key holds the deadline as the API first wrote it (every digit of
    the microseconds, UTC as Z), so that the retry's body is the first one's; a stale version's 409 shows the
    same deadline in `current`."""
    game = _clocked_game(caller)
    first = caller.moves(game, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="clocked")
    assert first.status_code == 200, first.content
    deadline = first.json()["turn_deadline"]
    stored = Game.objects.get(id=game["id"]).turn_deadline
    assert stored is not None and deadline == stored.isoformat().replace("+00:00", "Z")
    retry = caller.moves(game, [{"type": "end_turn"}], HTTP_IDEMPOTENCY_KEY="clocked")
    assert retry["Idempotent-Replayed"] == "true"
    assert retry.content == first.content
    stale = caller.moves(game, [{"type": "end_turn"}])
    assert stale.status_code == 409
    assert stale.json()["current"]["turn_deadline"] == deadline
