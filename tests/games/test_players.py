"""Players and their tokens: creation, the caller's identity, token rotation, and authentication errors."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from games import tasks
from games.models import Player, TokenRotation
from games.tokens import token_hash, token_unseal
from tests.support.games import Caller
from tests.support.problems import assert_problem


@pytest.mark.django_db
def test_creating_a_player_returns_its_token_once_and_stores_only_its_hash() -> None:
    response = APIClient().post("/api/v1/players", {"name": "Ada Lovelace"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert (
        set(body) == {"id", "name", "discriminator", "display_name", "token"}
        and body["name"] == "Ada Lovelace"
    )
    assert body["display_name"] == f"Ada Lovelace#{body['discriminator']}"
    assert response["Location"].endswith("/api/v1/players/me")
    player = Player.objects.get(id=body["id"])
    assert player.token_hash == token_hash(body["token"]) and body["token"] not in player.token_hash


@pytest.mark.django_db
def test_names_need_not_be_unique() -> None:
    client = APIClient()
    first = client.post("/api/v1/players", {"name": "Sam"}, format="json").json()
    second = client.post("/api/v1/players", {"name": "Sam"}, format="json").json()
    assert first["id"] != second["id"]


@pytest.mark.django_db
@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "x" * 33}, {"name": "tab\there"}, {"name": 5}])
def test_a_name_is_1_to_32_printable_characters(body: dict[str, object]) -> None:
    response = APIClient().post("/api/v1/players", body, format="json")
    assert_problem(response, 400, "invalid_request")


@pytest.mark.django_db
def test_unknown_members_of_a_player_are_refused() -> None:
    response = APIClient().post("/api/v1/players", {"name": "Ann", "email": "a@b.c"}, format="json")
    body = assert_problem(response, 400, "invalid_request")
    assert "email" in body["errors"]


@pytest.mark.django_db
def test_malformed_json_is_refused() -> None:
    response = APIClient().post("/api/v1/players", '{"name": ', content_type="application/json")
    assert_problem(response, 400, "malformed_json")


def test_players_me_names_the_caller(caller: Caller) -> None:
    response = caller.get("/api/v1/players/me")
    assert response.status_code == 200
    assert response.json()["id"] == caller.player_id and response.json()["name"] == "Ada"


@pytest.mark.django_db
def test_players_me_without_a_token_is_401_with_a_bearer_challenge() -> None:
    response = APIClient().get("/api/v1/players/me")
    assert_problem(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.django_db
@pytest.mark.parametrize("header", ["Bearer nope", "Bearer two words"])
def test_a_token_that_is_not_valid_is_401(header: str) -> None:
    response = APIClient().get("/api/v1/players/me", HTTP_AUTHORIZATION=header)
    assert_problem(response, 401, "invalid_token")


def test_rotating_the_token_revokes_the_old_one(caller: Caller) -> None:
    response = caller.post("/api/v1/players/me/token")
    assert response.status_code == 200
    new_token = response.json()["token"]
    assert new_token != caller.token
    old = APIClient().get("/api/v1/players/me", HTTP_AUTHORIZATION=f"Bearer {caller.token}")
    assert_problem(old, 401, "invalid_token")
    new = APIClient().get("/api/v1/players/me", HTTP_AUTHORIZATION=f"Bearer {new_token}")
    assert new.status_code == 200 and new.json()["id"] == caller.player_id


@pytest.mark.django_db
def test_rotating_needs_a_token() -> None:
    assert_problem(APIClient().post("/api/v1/players/me/token"), 401, "not_authenticated")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name",
    [
        "\u3164",  # HANGUL FILLER: a letter by category that shows nothing
        "\u3164\u3164\u3164",
        "Ada\u3164",
        "A" + "\u0301" * 31,  # a tower of combining marks
        "\u0410da",  # Cyrillic А in a Latin word
        "...",
        "\u2800",  # BRAILLE PATTERN BLANK
        "\u3000",  # IDEOGRAPHIC SPACE: blank once normalised
    ],
)
def test_a_name_that_looks_blank_stacks_marks_or_mixes_scripts_in_a_word_is_refused(name: str) -> None:
    response = APIClient().post("/api/v1/players", {"name": name}, format="json")
    body = assert_problem(response, 400, "invalid_request")
    assert "name" in body["errors"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("\uff21\uff44\uff41", "Ada"),  # fullwidth letters
        ("\U0001d400da", "Ada"),  # MATHEMATICAL BOLD CAPITAL A
        ("Nguyê\u0303n", "Nguyễn"),  # composed by NFKC
        ("Ада Lovelace", "Ада Lovelace"),  # scripts may differ between words
        ("東京タワー", "東京タワー"),  # kanji and katakana in one word
        ("R2-D2", "R2-D2"),
    ],
)
def test_a_name_is_stored_as_nfkc(sent: str, stored: str) -> None:
    response = APIClient().post("/api/v1/players", {"name": sent}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["name"] == stored == Player.objects.get(id=response.json()["id"]).name


KEY = "9b2f6c1e-3d4a-4f5b-8c7d-1e2f3a4b5c6d"
OTHER_KEY = "0d6f1c3a-7e2b-4a9c-b1d8-5f4e3c2b1a09"


def _rotate(caller: Caller, key: str | None = KEY, token: str | None = None) -> Any:
    headers: dict[str, Any] = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token or caller.token}")
    return client.post("/api/v1/players/me/token", **headers)


def test_a_rotation_retried_with_its_idempotency_key_answers_with_the_same_new_token(caller: Caller) -> None:
    first = _rotate(caller)
    assert first.status_code == 200
    new_token = first.json()["token"]
    # The response was lost: the client still holds the old token and sends the rotation again.
    retry = _rotate(caller)
    assert retry.status_code == 200 and retry["Idempotent-Replayed"] == "true"
    assert retry.json() == first.json()
    assert Player.objects.get(id=caller.player_id).token_hash == token_hash(new_token)
    me = APIClient().get("/api/v1/players/me", HTTP_AUTHORIZATION=f"Bearer {new_token}")
    assert me.status_code == 200


def test_the_new_token_is_not_stored_readable(caller: Caller) -> None:
    new_token = _rotate(caller).json()["token"]
    [stored] = TokenRotation.objects.values_list(flat=False).values()
    assert all(new_token not in str(value) for value in stored.values())
    assert stored["previous_token_hash"] == token_hash(caller.token)
    assert token_unseal(stored["sealed_token"], previous_token=caller.token, idempotency_key=KEY) == new_token
    assert token_unseal(stored["sealed_token"], previous_token=caller.token, idempotency_key=OTHER_KEY) != (
        new_token
    )


@pytest.mark.parametrize("key", ["3", "rotate-1", "k" * 64, KEY.replace("-", ""), "{" + KEY + "}"])
def test_an_idempotency_key_on_a_rotation_that_is_not_a_uuid_is_400_and_rotates_nothing(
    caller: Caller, key: str
) -> None:
    assert_problem(_rotate(caller, key), 400, "invalid_idempotency_key")
    assert caller.get("/api/v1/players/me").status_code == 200


def test_a_rotation_from_a_token_already_rotated_from_without_a_key_is_a_409(caller: Caller) -> None:
    assert _rotate(caller).status_code == 200
    assert_problem(_rotate(caller, None), 409, "token_rotated")
    # Everywhere else the replaced token is simply not valid.
    assert_problem(caller.get("/api/v1/players/me"), 401, "invalid_token")


def _refusal(response: Any) -> tuple[int, str, str]:
    body = response.json()
    return response.status_code, body["code"], body["detail"]


def test_a_replay_with_a_wrong_key_reads_as_an_expired_replay(caller: Caller) -> None:
    assert _rotate(caller).status_code == 200
    wrong = _refusal(_rotate(caller, OTHER_KEY))
    TokenRotation.objects.update(created_at=timezone.now() - timedelta(seconds=301))
    expired = _refusal(_rotate(caller, KEY))
    assert wrong == expired == (401, "invalid_token", expired[2])


def test_a_replay_after_the_window_is_refused_and_the_job_deletes_the_rotation_after_24_hours(
    caller: Caller,
) -> None:
    assert _rotate(caller).status_code == 200
    TokenRotation.objects.update(created_at=timezone.now() - timedelta(seconds=301))
    assert_problem(_rotate(caller), 401, "invalid_token")
    TokenRotation.objects.update(created_at=timezone.now() - timedelta(hours=25))
    assert tasks.idempotency_keys_expire.delay().get() == 1
    assert not TokenRotation.objects.exists()


def test_a_replay_after_the_new_token_was_used_once_is_refused(caller: Caller) -> None:
    new_token = _rotate(caller).json()["token"]
    assert APIClient().get("/api/v1/players/me", HTTP_AUTHORIZATION=f"Bearer {new_token}").status_code == 200
    assert_problem(_rotate(caller), 401, "invalid_token")


def test_a_replay_after_a_newer_rotation_never_returns_a_dead_token(caller: Caller) -> None:
    first = _rotate(caller).json()["token"]
    newest = _rotate(caller, OTHER_KEY, token=first).json()["token"]
    assert newest != first
    assert_problem(_rotate(caller), 401, "invalid_token")
    assert Player.objects.get(id=caller.player_id).token_hash == token_hash(newest)


def test_a_replay_after_the_new_token_made_a_move_is_refused(caller: Caller) -> None:
    game = caller.create_game(opponents=1)
    new_token = _rotate(caller).json()["token"]
    mover = APIClient()
    mover.credentials(HTTP_AUTHORIZATION=f"Bearer {new_token}")
    moved = mover.post(
        f"/api/v1/games/{game['id']}/moves", {"moves": [game["legal_moves"][0]]}, format="json"
    )
    assert moved.status_code == 200, moved.content
    assert_problem(_rotate(caller), 401, "invalid_token")


@pytest.mark.django_db
def test_a_token_never_rotated_costs_no_cache_call_however_slow_its_registration_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A player is built with token_rotated_at before its insert sets created_at: a registration that took
    milliseconds between the two (a busy server) still reads as never rotated, so its requests ask the cache
    nothing about a rotation's replay (which would be one Redis round trip each, for five minutes)."""
    from django.core.cache import caches

    real_now = timezone.now
    ticks = iter(range(1, 1000))
    # Every clock reading 5 ms later than the one before, on top of the real clock: the registration's
    # timestamps taken at different moments are milliseconds apart.
    monkeypatch.setattr(
        "django.utils.timezone.now", lambda: real_now() + timedelta(milliseconds=5 * next(ticks))
    )
    response = APIClient().post("/api/v1/players", {"name": "Slow"}, format="json")
    monkeypatch.setattr("django.utils.timezone.now", real_now)
    assert response.status_code == 201
    player = Player.objects.get(id=response.json()["id"])
    assert player.token_rotated_at <= player.created_at
    deleted: list[str] = []
    cache = caches["default"]
    monkeypatch.setattr(type(cache), "delete", lambda self, key, *a, **k: deleted.append(key))
    me = APIClient().get("/api/v1/players/me", HTTP_AUTHORIZATION=f"Bearer {response.json()['token']}")
    assert me.status_code == 200
    assert not [key for key in deleted if key.startswith("rotation-replay-open:")]
