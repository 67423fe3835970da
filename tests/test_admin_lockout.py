"""The admin's login locks a user name at a client address out after ADMIN_LOGIN_FAILURE_LIMIT wrong
passwords, the right password included, until the cool-off passes or an operator runs `manage.py axes_reset`;
the address is the one the rate limits count, behind NUM_PROXIES proxies too."""

import time
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import reverse

PASSWORD = "correct horse battery staple"
pytestmark = [
    pytest.mark.django_db,
    # A fast hasher: the tests count answers, not the cost of hashing a hundred passwords.
    pytest.mark.usefixtures("_fast_hasher"),
]


@pytest.fixture
def _fast_hasher() -> Any:
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture
def operator() -> User:
    return User.objects.create_superuser("operator", "operator@kingscorner.example", PASSWORD)


def _login(client: Client, password: str, **headers: Any) -> int:
    response = client.post(
        reverse("admin:login"), {"username": "operator", "password": password, "next": "/admin/"}, **headers
    )
    return response.status_code


def _signed_in(client: Client) -> bool:
    return client.get(reverse("admin:index")).status_code == 200


def test_a_hundred_wrong_passwords_lock_the_login_even_for_the_right_one(operator: User) -> None:
    client = Client()
    statuses = [_login(client, f"guess {n}") for n in range(100)]
    limit = settings.AXES_FAILURE_LIMIT
    # Before the limit the form is shown again; from the limit on every answer is a refusal.
    assert statuses[: limit - 1] == [200] * (limit - 1)
    assert set(statuses[limit:]) == {429}
    assert _login(client, PASSWORD) == 429
    assert not _signed_in(client)


def test_an_operator_unlocks_the_login_with_axes_reset(operator: User) -> None:
    client = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        _login(client, f"guess {n}")
    assert _login(client, PASSWORD) == 429
    call_command("axes_reset", verbosity=0)
    assert _login(client, PASSWORD) == 302
    assert _signed_in(client)


def test_the_lockout_ends_after_the_cool_off(operator: User) -> None:
    client = Client()
    with override_settings(AXES_COOLOFF_TIME=timedelta(seconds=1)):
        for n in range(settings.AXES_FAILURE_LIMIT):
            _login(client, f"guess {n}")
        assert _login(client, PASSWORD) == 429
        time.sleep(1.5)
        assert _login(client, PASSWORD) == 302


def test_a_lockout_at_one_address_leaves_the_operator_at_another_free(operator: User) -> None:
    client = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        _login(client, f"guess {n}", REMOTE_ADDR="203.0.113.5")
    assert _login(client, PASSWORD, REMOTE_ADDR="203.0.113.5") == 429
    assert _login(Client(), PASSWORD, REMOTE_ADDR="198.51.100.7") == 302


def test_behind_a_proxy_the_lockout_counts_the_forwarded_address() -> None:
    User.objects.create_superuser("operator", "operator@kingscorner.example", PASSWORD)
    proxy = {"REMOTE_ADDR": "10.0.0.2"}
    with override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}):
        for n in range(settings.AXES_FAILURE_LIMIT):
            _login(Client(), f"guess {n}", HTTP_X_FORWARDED_FOR="203.0.113.5", **proxy)
        assert _login(Client(), PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.5", **proxy) == 429
        # Another client behind the same proxy is not locked out.
        assert _login(Client(), PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.7", **proxy) == 302


def test_without_a_proxy_a_forged_forwarded_address_does_not_escape_the_lockout(operator: User) -> None:
    for n in range(settings.AXES_FAILURE_LIMIT):
        _login(Client(), f"guess {n}", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
    assert _login(Client(), PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.200") == 429
