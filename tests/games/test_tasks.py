"""The games app's Celery tasks (games/tasks.py)."""

from datetime import timedelta

from django.conf import settings

from games import tasks
from games.models import IdempotentRequest
from tests.support.games import SEED, Caller, backdate


def test_the_beat_job_deletes_the_idempotency_keys_older_than_24_hours(caller: Caller) -> None:
    view = caller.create_game(seed=SEED)
    path, body = f"/api/v1/games/{view['id']}/moves", {"moves": [{"type": "end_turn"}]}
    for key in ("old", "new"):
        assert caller.post(path, body, HTTP_IDEMPOTENCY_KEY=key).status_code == 200
    backdate(IdempotentRequest.objects.filter(key="old"), 25)
    backdate(IdempotentRequest.objects.filter(key="new"), 23)
    assert tasks.idempotency_keys_expire.delay().get() == 1
    assert list(IdempotentRequest.objects.values_list("key", flat=True)) == ["new"]
    entry = settings.CELERY_BEAT_SCHEDULE["idempotency-keys-expire"]
    assert entry["task"] == "games.tasks.idempotency_keys_expire"
    assert settings.IDEMPOTENCY_KEY_TTL == timedelta(hours=24)
