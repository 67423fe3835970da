"""Under the ASGI server every request but a stream runs on a thread of its own, which ends with it: its
database connection must be closed with it, not left for the garbage collector to find (a connection's
objects refer to each other), or a busy process holds one connection for every request it has served since
the collector last ran, until PostgreSQL refuses new ones."""

import gc
import http.client
import json
from collections.abc import Iterator

import pytest
from django.db import connection

from tests.support.games import new_caller
from tests.support.streams import LiveAsgiServer

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def server() -> Iterator[LiveAsgiServer]:
    live = LiveAsgiServer()
    live.start()
    yield live
    live.stop()


def _connections_to_the_database() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [connection.settings_dict["NAME"]],
        )
        (count,) = cursor.fetchone()
    return int(count)


def test_the_connections_of_requests_served_under_asgi_are_closed_with_them(server: LiveAsgiServer) -> None:
    token = new_caller("Ada").token
    # A collection would close the connections left behind: none runs during the requests.
    gc.collect()
    gc.disable()
    try:
        before = _connections_to_the_database()
        for _ in range(12):
            client = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            client.request("GET", "/api/v1/players/me", headers={"Authorization": f"Bearer {token}"})
            response = client.getresponse()
            assert response.status == 200 and json.loads(response.read())["name"] == "Ada"
            client.close()
        after = _connections_to_the_database()
    finally:
        gc.enable()
    assert after - before <= 1, (before, after)
