"""API views that belong to the project rather than to an app: the health check."""

from django.db import DatabaseError, connection
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kingscorner.domain import DomainError


class DatabaseUnavailable(DomainError):
    code = "database_unavailable"


class HealthApi(APIView):
    """Answers whether the service is up and its database answers."""

    # Load balancers poll this; a rate limit would take a healthy instance out of service.
    throttle_classes = ()

    class HealthOutputSerializer(serializers.Serializer):
        status = serializers.CharField()
        database = serializers.BooleanField()

    @extend_schema(operation_id="health", responses={200: HealthOutputSerializer})
    def get(self, request: Request) -> Response:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except DatabaseError as error:
            raise DatabaseUnavailable("The database does not answer.") from error
        return Response(self.HealthOutputSerializer({"status": "ok", "database": True}).data)
