"""API views that belong to the project rather than to an app: the health check."""

from django.core.cache import caches
from django.db import DatabaseError, connection
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kingscorner.api import ProblemSerializer
from kingscorner.cache import FailOpenRedisCache
from kingscorner.errors import PROBLEM_CONTENT_TYPE, ApiProblem

CACHE_HELP = "`ok`, `unavailable`, or `not_configured` for an in-process cache (no REDIS_URL)."


def _cache_state() -> str:
    cache = caches["default"]
    if not isinstance(cache, FailOpenRedisCache):
        return "not_configured"
    return "ok" if cache.available() else "unavailable"


class HealthApi(APIView):
    """Answers whether the service is up, and its database and its cache each: 200 while the database answers
    (`degraded` when the cache does not, for requests are then served without rate limits), 503 when it
    does not."""

    # Load balancers poll this; a rate limit would take a healthy instance out of service.
    throttle_classes = ()

    class HealthOutputSerializer(serializers.Serializer):
        # Plain strings: an enum here would take the name `StatusEnum` that the games' status has.
        status = serializers.CharField(help_text="`ok`, or `degraded` while the cache does not answer.")
        database = serializers.CharField(help_text="`ok`.")
        cache = serializers.CharField(help_text=CACHE_HELP)

    class HealthUnavailableSerializer(ProblemSerializer):
        database = serializers.CharField(help_text="`unavailable`.")
        cache = serializers.CharField(help_text=CACHE_HELP)

    @extend_schema(
        operation_id="health",
        responses={
            200: HealthOutputSerializer,
            (503, PROBLEM_CONTENT_TYPE): OpenApiResponse(
                response=HealthUnavailableSerializer,
                description="The database does not answer (`database_unavailable`).",
            ),
        },
    )
    def get(self, request: Request) -> Response:
        cache = _cache_state()
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except DatabaseError as error:
            raise ApiProblem(
                status=503,
                code="database_unavailable",
                detail="The database does not answer.",
                extra={"database": "unavailable", "cache": cache},
            ) from error
        status = "ok" if cache != "unavailable" else "degraded"
        return Response(
            self.HealthOutputSerializer({"status": status, "database": "ok", "cache": cache}).data
        )
