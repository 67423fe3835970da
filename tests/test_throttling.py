"""The rate limits (kingscorner/api/throttling.py): per address without a token, per token with one, each a
fixed window counted exactly: 16 threads sending from one address, or with one token, get exactly the limit
through and a 429 `rate_limited` with a Retry-After within the window for every other request, on Redis (as
deployed) and on the in-process cache of a local run; on Redis a request costs one round trip. (Failing open
while Redis is down or hung: tests/test_cache.py.)"""

from collections import Counter
from typing import Any

import pytest
import redis
from django.core.cache import caches
from django.core.signals import request_finished
from django.db import DatabaseError, connection, transaction
from django.test import override_settings
from rest_framework.test import APIClient

from games.models import Game
from kingscorner.api.throttling import Rate, WindowCount, rate_parse
from kingscorner.cache import FailOpenRedisCache
from tests.support.ci import IN_CI
from tests.support.games import Caller, new_caller
from tests.support.openapi import served_document
from tests.support.problems import assert_problem
from tests.support.races import race, split
from tests.support.throttling import rates


@pytest.fixture(autouse=True)
def _schema_fetched_before_counting() -> None:
    """The first response a test run checks against the served schema fetches the schema through the test
    client, from the address the tests count: fetched (and its count dropped) before a test, it is not
    counted in it."""
    served_document()
    caches["default"].clear()


@pytest.mark.django_db
def test_requests_without_a_token_are_limited_per_address() -> None:
    with override_settings(REST_FRAMEWORK=rates("2/min", "100/min")):
        client = APIClient()
        body = {"hand": ["QD"]}
        assert [client.post("/api/v1/analysis", body, format="json").status_code for _ in range(2)] == [
            200,
            200,
        ]
        limited = client.post("/api/v1/analysis", body, format="json")
        assert_problem(limited, 429, "rate_limited")
        assert int(limited["Retry-After"]) > 0
        other_address = client.post("/api/v1/analysis", body, format="json", REMOTE_ADDR="10.0.0.9")
        assert other_address.status_code == 200


def test_requests_with_a_token_are_limited_per_token(caller: Caller) -> None:
    with override_settings(REST_FRAMEWORK=rates("100/min", "3/min")):
        statuses = [caller.get("/api/v1/players/me").status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        assert new_caller("Eve").get("/api/v1/players/me").status_code == 200


def _a_rotation_goes_on_in_the_replaced_tokens_window() -> None:
    caller = new_caller()
    with override_settings(REST_FRAMEWORK=rates("100/min", "3/min")):
        assert caller.get("/api/v1/players/me").status_code == 200
        rotated = caller.client.post("/api/v1/players/me/token")
        assert rotated.status_code == 200, rotated.content
        caller.client.credentials(HTTP_AUTHORIZATION=f"Bearer {rotated.json()['token']}")
        # Two requests counted with the old token: one more with the new one is the limit.
        assert caller.get("/api/v1/players/me").status_code == 200
        assert_problem(caller.get("/api/v1/players/me"), 429, "rate_limited")


@pytest.mark.django_db
def test_a_rotated_token_does_not_open_a_fresh_window() -> None:
    """Whichever cache the run has (Redis in CI): rotating a token is no way around the limit."""
    _a_rotation_goes_on_in_the_replaced_tokens_window()


@pytest.mark.django_db
def test_a_rotated_token_does_not_open_a_fresh_window_without_redis() -> None:
    with override_settings(CACHES=LOCAL_CACHE):
        caches["default"].clear()
        try:
            _a_rotation_goes_on_in_the_replaced_tokens_window()
        finally:
            # The in-process cache outlives the override: leave no count behind for the next test.
            caches["default"].clear()


# --- exact under concurrency, one round trip ------------------------------------------------------------

THREADS = 16
PER_THREAD = 8
LIMIT = 50
BODY = {"hand": ["QD"]}
WINDOW_SECONDS = 3600
LOCAL_CACHE = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


def _needs_redis() -> None:
    if not isinstance(caches["default"], FailOpenRedisCache):
        if IN_CI:
            pytest.fail("CI is set but REDIS_URL is not", pytrace=False)
        pytest.skip("needs REDIS_URL")


def _token() -> str:
    response = APIClient().post("/api/v1/players", {"name": "Ada"}, format="json")
    assert response.status_code == 201, response.content
    token: str = response.json()["token"]
    return token


def _burst(token: str | None) -> list[Any]:
    """THREADS threads released at once, each sending PER_THREAD requests one after another: POST analysis
    without a token (counted per address), GET players/me with one (per token)."""

    def sender() -> list[Any]:
        client = APIClient()
        if token is None:
            return [client.post("/api/v1/analysis", BODY, format="json") for _ in range(PER_THREAD)]
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return [client.get("/api/v1/players/me") for _ in range(PER_THREAD)]

    batches, errors = split(race(THREADS, sender))
    assert errors == []
    return [response for batch in batches for response in batch]


def _assert_exactly_the_limit(responses: list[Any]) -> None:
    statuses = Counter(response.status_code for response in responses)
    assert statuses == {200: LIMIT, 429: THREADS * PER_THREAD - LIMIT}
    for response in responses:
        if response.status_code == 429:
            assert_problem(response, 429, "rate_limited")
            assert 1 <= int(response["Retry-After"]) <= WINDOW_SECONDS


def _counted_by_address() -> None:
    with override_settings(REST_FRAMEWORK=rates(f"{LIMIT}/hour", "100000/hour")):
        _assert_exactly_the_limit(_burst(None))


def _counted_by_token() -> None:
    token = _token()
    with override_settings(REST_FRAMEWORK=rates("100000/hour", f"{LIMIT}/hour")):
        _assert_exactly_the_limit(_burst(token))
        # Another token has a count of its own.
        other = APIClient()
        other.credentials(HTTP_AUTHORIZATION=f"Bearer {_token()}")
        assert other.get("/api/v1/players/me").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_sixteen_threads_from_one_address_get_exactly_the_limit_through_on_redis() -> None:
    _needs_redis()
    _counted_by_address()


@pytest.mark.django_db(transaction=True)
def test_sixteen_threads_with_one_token_get_exactly_the_limit_through_on_redis() -> None:
    _needs_redis()
    _counted_by_token()


@pytest.mark.django_db(transaction=True)
@override_settings(CACHES=LOCAL_CACHE)
def test_sixteen_threads_from_one_address_get_exactly_the_limit_through_without_redis() -> None:
    _counted_by_address()


@pytest.mark.django_db(transaction=True)
@override_settings(CACHES=LOCAL_CACHE)
def test_sixteen_threads_with_one_token_get_exactly_the_limit_through_without_redis() -> None:
    _counted_by_token()


@pytest.mark.django_db
def test_a_request_costs_one_redis_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    _needs_redis()
    token = _token()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert client.get("/api/v1/players/me").status_code == 200
    sent: list[object] = []
    send = redis.connection.AbstractConnection.send_packed_command

    def counted(self: Any, command: Any, check_health: bool = True) -> None:
        sent.append(command)
        send(self, command, check_health)  # type: ignore[no-untyped-call]

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counted)
    for expected in (1, 2, 3):
        assert client.get("/api/v1/players/me").status_code == 200
        assert len(sent) == expected
    assert client.post("/api/v1/analysis", BODY, format="json").status_code == 200
    assert len(sent) == 4


@pytest.mark.django_db
def test_retry_after_is_the_rest_of_the_window_and_a_new_window_counts_afresh() -> None:
    _needs_redis()
    cache = caches["default"]
    assert isinstance(cache, FailOpenRedisCache)
    with override_settings(REST_FRAMEWORK=rates("100000/hour", "2/min")):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {_token()}")
        statuses = [client.get("/api/v1/players/me").status_code for _ in range(3)]
        assert statuses == [200, 200, 429]
        refused = client.get("/api/v1/players/me")
        assert_problem(refused, 429, "rate_limited")
        assert 1 <= int(refused["Retry-After"]) <= 60
        # The window ends when its counter expires: delete it, as expiry would, and the player is let in.
        [key] = cache._cache.get_client(write=True).keys(cache.make_key("ratelimit:user:*"))  # type: ignore[attr-defined]
        cache._cache.get_client(write=True).delete(key)  # type: ignore[attr-defined]
        assert client.get("/api/v1/players/me").status_code == 200


@pytest.mark.django_db
def test_a_tokens_moves_and_reads_count_in_one_window() -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {_token()}")
    game = client.post("/api/v1/games", {"level": "normal"}, format="json").json()
    caches["default"].clear()
    with override_settings(REST_FRAMEWORK=rates("100000/hour", "3/min")):
        moves = {"moves": [{"type": "end_turn"}]}
        statuses = [
            client.get("/api/v1/players/me").status_code,
            client.post(f"/api/v1/games/{game['id']}/moves", moves, format="json").status_code,
            client.get(f"/api/v1/games/{game['id']}").status_code,
        ]
        assert statuses == [200, 200, 200]
        refused = client.post(f"/api/v1/games/{game['id']}/moves", moves, format="json")
        assert_problem(refused, 429, "rate_limited")


@pytest.mark.parametrize(
    ("text", "rate"),
    [
        ("600/min", Rate(600, 60)),
        ("1200/m", Rate(1200, 60)),
        ("5/s", Rate(5, 1)),
        ("10/hour", Rate(10, 3600)),
        ("0/day", Rate(0, 86400)),
    ],
)
def test_rates_are_read_in_drfs_notation(text: str, rate: Rate) -> None:
    assert rate_parse(text) == rate


def _user_windows() -> list[str]:
    """The per-token windows the cache holds (Redis's keys, or the in-process cache's)."""
    cache = caches["default"]
    if isinstance(cache, FailOpenRedisCache):
        client = cache._cache.get_client("ratelimit", write=False)  # type: ignore[attr-defined]
        return [key.decode() for key in client.scan_iter(match="*ratelimit:user:*")]
    return [key for key in cache._cache if "ratelimit:user:" in key]  # type: ignore[attr-defined]


@pytest.mark.django_db
@pytest.mark.parametrize("operation", ["players_me", "moves"])
def test_requests_with_tokens_no_player_has_count_against_the_address_and_leave_no_window(
    caller: Caller, operation: str
) -> None:
    game = caller.create_game(opponents=1)
    caches["default"].clear()
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates("3/min", "100/min")):
        statuses = []
        for number in range(6):
            client.credentials(HTTP_AUTHORIZATION=f"Bearer kc_random-token-{number}")
            if operation == "players_me":
                response = client.get("/api/v1/players/me")
            else:
                response = client.post(
                    f"/api/v1/games/{game['id']}/moves", {"moves": [{"type": "end_turn"}]}, format="json"
                )
            statuses.append(response.status_code)
        assert statuses == [401, 401, 401, 429, 429, 429]
        assert_problem(response, 429, "rate_limited")
        assert int(response["Retry-After"]) >= 1
        assert _user_windows() == []
        # The address's own requests without a token are over the limit too; a valid token is not.
        assert client.get("/api/v1/daily", HTTP_AUTHORIZATION="").status_code == 429
        assert caller.get("/api/v1/players/me").status_code == 200


@pytest.mark.django_db
def test_a_tokens_count_is_sent_before_its_lookup_and_read_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rate limit's round trip overlaps the database read that looks the token up: the count goes out
    first, the read runs, then the count's answer is read; for GET players/me (authentication's lookup) and a
    move (the read that loads the game with the token)."""
    _needs_redis()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {_token()}")
    game = client.post("/api/v1/games", {"level": "normal"}, format="json").json()
    order: list[str] = []
    send = redis.connection.AbstractConnection.send_packed_command
    read = redis.connection.AbstractConnection.read_response

    def sent(self: Any, command: Any, check_health: bool = True) -> None:
        order.append("count sent")
        send(self, command, check_health)  # type: ignore[no-untyped-call]

    def answered(self: Any, *args: Any, **kwargs: Any) -> Any:
        order.append("count answered")
        return read(self, *args, **kwargs)  # type: ignore[no-untyped-call]

    def statement(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        order.append("statement")
        return execute(sql, params, many, context)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", sent)
    monkeypatch.setattr(redis.connection.AbstractConnection, "read_response", answered)
    with connection.execute_wrapper(statement):
        assert client.get("/api/v1/players/me").status_code == 200
        assert order == ["count sent", "statement", "count answered"]
        order.clear()
        moved = client.post(
            f"/api/v1/games/{game['id']}/moves", {"moves": [{"type": "end_turn"}]}, format="json"
        )
        assert moved.status_code == 200
        assert order[:3] == ["count sent", "statement", "count answered"]
        assert order.count("count sent") == 1


@pytest.mark.django_db
def test_a_move_past_the_tokens_limit_is_refused_after_its_read_and_writes_nothing() -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {_token()}")
    game = client.post("/api/v1/games", {"level": "normal"}, format="json").json()
    caches["default"].clear()
    moves = {"moves": [{"type": "end_turn"}]}
    with override_settings(REST_FRAMEWORK=rates("100000/hour", "1/min")):
        assert client.post(f"/api/v1/games/{game['id']}/moves", moves, format="json").status_code == 200
        version = Game.objects.get(id=game["id"]).version
        refused = client.post(f"/api/v1/games/{game['id']}/moves", moves, format="json")
        assert_problem(refused, 429, "rate_limited")
        assert int(refused["Retry-After"]) >= 1
        assert_problem(client.get(f"/api/v1/games/{game['id']}"), 429, "rate_limited")
    assert Game.objects.get(id=game["id"]).version == version
    # Nothing is left waiting on the thread's connection for its next request.
    assert connection.execute_wrappers == []


@pytest.mark.django_db
def test_a_count_waiting_for_a_statement_is_read_when_the_statement_fails_or_when_the_request_finishes() -> (
    None
):
    _needs_redis()
    rate = Rate(100, 60)
    failing = WindowCount("user", "a-failing-statement", rate)
    # In a savepoint (its own statement comes first), so that the test's transaction lives on.
    with pytest.raises(DatabaseError), transaction.atomic():
        failing.read_after_next_statement()
        assert not failing.answered and len(connection.execute_wrappers) == 1
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")
    assert failing.answered and connection.execute_wrappers == []
    assert failing.over() is None
    # A request that ends without a statement has its count read as it finishes.
    unread = WindowCount("user", "no-statement", rate)
    unread.read_after_next_statement()
    request_finished.send(sender=None)
    assert unread.answered and connection.execute_wrappers == []
