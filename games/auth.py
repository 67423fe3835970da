"""Bearer-token authentication: `Authorization: Bearer <token>`, looked up by the token's SHA-256, and its
description in the OpenAPI schema."""

import hashlib
import secrets
from typing import Any

from django.http import HttpRequest
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from games.models import Player

TOKEN_PREFIX = "kc_"


def token_new() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: HttpRequest) -> tuple[Player, str] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != self.keyword.lower():
            return None
        token = token.strip()
        if not token or " " in token:
            raise exceptions.AuthenticationFailed("The Authorization header is 'Bearer <token>'.")
        player = Player.objects.filter(token_hash=token_hash(token)).first()
        if player is None:
            raise exceptions.AuthenticationFailed("The token is not valid; it may have been replaced.")
        return player, token

    def authenticate_header(self, request: HttpRequest) -> str:
        return f'{self.keyword} realm="api"'


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Describes the bearer token in the OpenAPI schema."""

    target_class = BearerTokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "The token from POST /api/v1/players, sent as `Authorization: Bearer <token>`.",
        }
