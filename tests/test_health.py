"""The health endpoint (kingscorner/api/health.py) with the database up; tests/test_cache.py and
tests/test_database_outage.py cover it with the cache or the database down."""

import pytest
from django.test import Client


@pytest.mark.django_db
def test_health_reports_ok_with_database(client: Client) -> None:
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["database"] == "ok"
