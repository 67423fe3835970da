"""The index of the API: links to where a client starts."""

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kingscorner.api.examples import EXAMPLES
from kingscorner.api.openapi import Refusals


class ApiIndexApi(APIView):
    permission_classes = (AllowAny,)

    class ApiIndexOutputSerializer(serializers.Serializer[Any]):
        """Where to start."""

        docs = serializers.URLField(help_text="The API's documentation, for people.")
        schema = serializers.URLField(help_text="The OpenAPI document, for programs.")
        health = serializers.URLField()
        players = serializers.URLField(help_text="POST here to register and get a token.")
        games = serializers.URLField()
        daily = serializers.URLField(help_text="Today's deal.")
        analysis = serializers.URLField()

    refusals = Refusals("api_index", token="optional")

    @extend_schema(
        operation_id="api_index",
        summary="Index of the API",
        tags=["service"],
        parameters=refusals.headers(),
        responses={200: ApiIndexOutputSerializer, **refusals.responses()},
        examples=[
            OpenApiExample(
                "The links", value=EXAMPLES["api_index_response"], response_only=True, status_codes=["200"]
            ),
            *refusals.examples(),
        ],
        description="Links to the documentation, the OpenAPI document and the main resources.",
    )
    def get(self, request: Request) -> Response:
        links = {
            "docs": "docs",
            "schema": "schema",
            "health": "health",
            "players": "player-create",
            "games": "games",
            "daily": "daily-today",
            "analysis": "analysis",
        }
        index = {name: request.build_absolute_uri(reverse(url)) for name, url in links.items()}
        return Response(self.ApiIndexOutputSerializer(index).data)
