"""Bearer-token authentication: `Authorization: Bearer <token>`, looked up by the token's SHA-256, and its
description in the OpenAPI schema."""

import hashlib
import hmac
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from games import streams
from games.models import Player, TokenRotation

TOKEN_PREFIX = "kc_"


def token_new() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _keystream(previous_token: str, idempotency_key: str) -> bytes:
    # HMAC keyed by the replaced token: the stored SHA-256 of that token does not give it.
    message = b"kingscorner token rotation replay\0" + idempotency_key.encode()
    return hmac.new(previous_token.encode(), message, hashlib.sha512).digest()


def token_seal(token: str, *, previous_token: str, idempotency_key: str) -> str:
    """`token` encrypted for a retry of its rotation: XOR with a keystream that only the replaced token and
    the Idempotency-Key give. Each replaced token is rotated from once, so each keystream is used once."""
    stream = _keystream(previous_token, idempotency_key)
    data = token.encode()
    if len(data) > len(stream):
        raise ValueError("a token is longer than the keystream")
    return bytes(a ^ b for a, b in zip(data, stream, strict=False)).hex()


def token_unseal(sealed: str, *, previous_token: str, idempotency_key: str) -> str:
    """The token token_seal sealed; with another token or key, bytes that are no token (a token is ASCII,
    and Latin-1 decodes any bytes)."""
    stream = _keystream(previous_token, idempotency_key)
    return bytes(a ^ b for a, b in zip(bytes.fromhex(sealed), stream, strict=False)).decode("latin-1")


class InvalidToken(exceptions.AuthenticationFailed):
    """401 `invalid_token`: no player has the token."""

    default_detail = "The token is not valid; it may have been replaced."


class BearerToken:
    """A bearer token not looked up yet: the request's user in the views that authenticate and load their
    game in one query (the moves and a new hand, games.persistence.game_load), which refuse a token no player
    has there, with the same 401. `pk` identifies the token (its hash) to the rate limits."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, token: str) -> None:
        self.hash = token_hash(token)

    @property
    def pk(self) -> str:
        return self.hash


def _bearer_token(request: Request, keyword: str) -> str | None:
    """The token of a request's `Authorization: Bearer <token>`; None without one (or with another scheme)."""
    header = authentication.get_authorization_header(request).decode("latin-1")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != keyword.lower():
        return None
    token = token.strip()
    if not token or " " in token:
        raise exceptions.AuthenticationFailed("The Authorization header is 'Bearer <token>'.")
    return token


def _view(request: Request) -> Any:
    return getattr(request, "parser_context", {}).get("view")


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <token>`, looked up by the token's hash. A view that sets
    `looks_up_token_with_game` (moves, a new hand) gets the token unlooked-up, as a BearerToken, and its
    service looks it up in the query that loads the game (games.persistence.game_load)."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Player, str] | None:
        token = _bearer_token(request, self.keyword)
        if token is None:
            return None
        if getattr(_view(request), "looks_up_token_with_game", False):
            # The view's service looks the token up with what it loads (request_bearer): no query here.
            return BearerToken(token), token  # type: ignore[return-value]
        player = Player.objects.filter(token_hash=token_hash(token)).first()
        if player is None:
            player = self._rotated_from(request, token)
        if player is None:
            raise InvalidToken()
        return player, token

    def _rotated_from(self, request: Request, token: str) -> Player | None:
        """For a view that sets `accepts_rotated_token` (token rotation) only: the player whose token this
        was until a rotation within IDEMPOTENCY_KEY_TTL, so that the rotation service can answer a retry of
        that rotation, or refuse a concurrent one with 409 rather than 401. Every other operation refuses a
        replaced token."""
        if not getattr(_view(request), "accepts_rotated_token", False):
            return None
        horizon = timezone.now() - settings.IDEMPOTENCY_KEY_TTL
        rotation = (
            TokenRotation.objects.select_related("player")
            .filter(previous_token_hash=token_hash(token), created_at__gte=horizon)
            .first()
        )
        return None if rotation is None else rotation.player

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="api"'


class StreamTicketAuthentication(authentication.BaseAuthentication):
    """A stream ticket in the query (`?ticket=`), for clients that cannot send headers (a browser's
    EventSource). `request.auth` is then the verified StreamTicket, which names the one game it opens."""

    def authenticate(self, request: Request) -> tuple[Player, streams.StreamTicket] | None:
        ticket = request.query_params.get("ticket")
        if ticket is None:
            return None
        return streams.ticket_read(ticket)

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


def request_bearer(request: Request) -> BearerToken:
    """The bearer token of a request to a view that sets `looks_up_token_with_game`."""
    bearer = request.user
    if not isinstance(bearer, BearerToken):
        raise exceptions.NotAuthenticated()
    return bearer


def bearer_check(bearer: BearerToken) -> None:
    """Raises InvalidToken unless a player has the token: for a request refused before its service looked
    the token up, so that a bad token is a 401 whatever else is wrong with the request."""
    if not Player.objects.filter(token_hash=bearer.hash).exists():
        raise InvalidToken()


@contextmanager
def bearer_checked_on_refusal(bearer: BearerToken) -> Iterator[None]:
    """Around what refuses a request before its token was looked up (its body, its headers): a refusal is
    preceded by the token's check, so that a bad token is a 401 whatever else is wrong, as where
    authentication runs first."""
    try:
        yield
    except Exception:
        bearer_check(bearer)
        raise


def request_player(request: Request) -> Player:
    """The player a request authenticated as, in a view that requires one (IsAuthenticated)."""
    player = request.user
    if not isinstance(player, Player):
        raise exceptions.NotAuthenticated()
    return player


def request_player_or_none(request: Request) -> Player | None:
    """The player a request authenticated as, or None in a view where the token is optional."""
    player = request.user
    return player if isinstance(player, Player) else None


def request_token(request: Request) -> str:
    """The bearer token a request authenticated with, in a view that requires one."""
    token = request.auth
    if not isinstance(token, str):
        raise exceptions.NotAuthenticated()
    return token


class BearerTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """Describes the bearer token in the OpenAPI schema."""

    target_class = BearerTokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "The token from POST /api/v1/players, sent as `Authorization: Bearer <token>`.",
        }


class StreamTicketScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """Describes the stream ticket in the OpenAPI schema."""

    target_class = StreamTicketAuthentication
    name = "streamTicket"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "query",
            "name": "ticket",
            "description": "A stream ticket from POST /api/v1/games/{id}/stream-tickets: it opens that "
            "game's stream for a minute, for a client that cannot send the Authorization header "
            "(EventSource).",
        }
