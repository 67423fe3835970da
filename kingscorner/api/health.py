"""The health check, for load balancers: the service, its database and its cache."""

from typing import Any

from django.core.cache import caches
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kingscorner.api.errors import DATABASE_UNAVAILABLE_DETAIL
from kingscorner.api.examples import EXAMPLES
from kingscorner.api.openapi import Refusals
from kingscorner.cache import FailOpenRedisCache
from kingscorner.database import database_answers
from kingscorner.domain import DomainError

# A load balancer's probe gets its answer within this, whatever the database does (the cache's calls are
# bounded at half a second, kingscorner/cache.py).
HEALTH_DATABASE_SECONDS = 1.5
CACHE_HELP = "`ok`, `unavailable`, or `not_configured` for an in-process cache (no REDIS_URL)."


class DatabaseUnavailable(DomainError):
    code = "database_unavailable"


def _cache_state() -> str:
    cache = caches["default"]
    if not isinstance(cache, FailOpenRedisCache):
        return "not_configured"
    return "ok" if cache.available() else "unavailable"


class HealthApi(APIView):
    # Load balancers poll this: a rate limit would take a healthy instance out of service, and a stale token
    # in a probe's header must not fail it.
    throttle_classes = ()
    authentication_classes = ()
    permission_classes = (AllowAny,)

    class HealthOutputSerializer(serializers.Serializer[Any]):
        """The service answers: its database does, and its cache does or not."""

        # Plain strings: an enum here would take the name `StatusEnum` that the games' status has.
        status = serializers.CharField(help_text="`ok`, or `degraded` while the cache does not answer.")
        database = serializers.CharField(help_text="`ok`.")
        cache = serializers.CharField(help_text=CACHE_HELP)

    refusals = Refusals(
        "health",
        "database_unavailable",
        token="none",
        throttled=False,
        members={
            "database_unavailable": {
                "database": serializers.CharField(help_text="`unavailable`."),
                "cache": serializers.CharField(help_text=CACHE_HELP),
            }
        },
        example_members={"database_unavailable": {"database": "unavailable", "cache": "ok"}},
    )

    @extend_schema(
        operation_id="health",
        summary="Health check",
        tags=["service"],
        auth=[],
        parameters=refusals.headers(),
        responses={200: HealthOutputSerializer, **refusals.responses()},
        examples=[
            OpenApiExample("Up", value=EXAMPLES["health_response"], response_only=True, status_codes=["200"]),
            *refusals.examples(),
        ],
        description="Whether the service is up, for load balancers, with its database and its cache each: "
        "200 while the database answers within 1.5 s (`status` is `degraded` while the rate-limit cache "
        "does not, for requests are then served without rate limits), 503 `database_unavailable` when it "
        "does not, within 2 s whatever the database does. Takes no token (an Authorization header is "
        "ignored) and is not rate-limited.",
    )
    def get(self, request: Request) -> Response:
        cache = _cache_state()
        if not database_answers(within=HEALTH_DATABASE_SECONDS):
            raise DatabaseUnavailable(
                DATABASE_UNAVAILABLE_DETAIL, members={"database": "unavailable", "cache": cache}
            )
        status = "ok" if cache != "unavailable" else "degraded"
        return Response(
            self.HealthOutputSerializer({"status": status, "database": "ok", "cache": cache}).data
        )
