"""The benchmark's URL conf: the product's URLs and the floor, `GET /bench/floor`, a bare Django view (no DRF)
that runs one prepared statement, the player by the hash of the request's bearer token, and answers with a
small JSON body. Every middleware of the product runs around it, as around every API request; what an API
request costs above it is what DRF, authentication, the rate limit, the service and the serializers add."""

import hashlib

import psycopg
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path

from kingscorner.urls import handler400, handler404, handler500
from kingscorner.urls import urlpatterns as product_urls

_PLAYER_BY_TOKEN_HASH = "SELECT id, name FROM games_player WHERE token_hash = %s"


def floor(request: HttpRequest) -> HttpResponse:
    _, _, token = request.headers.get("Authorization", "").partition(" ")
    token_hash = hashlib.sha256(token.strip().encode()).hexdigest()
    connection.ensure_connection()
    # Server-side binding, prepared on the connection at its first run (Django's own cursor binds on the
    # client and cannot prepare).
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(_PLAYER_BY_TOKEN_HASH, [token_hash], prepare=True)
        row = cursor.fetchone()
    if row is None:
        return JsonResponse({"code": "invalid_token"}, status=401)
    return JsonResponse({"id": str(row[0]), "name": row[1]})


urlpatterns = [path("bench/floor", floor), *product_urls]

__all__ = ["handler400", "handler404", "handler500", "urlpatterns"]
