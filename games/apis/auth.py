"""Bearer-token authentication: `Authorization: Bearer <token>`, looked up by the token's SHA-256 (the token's
own functions are games.tokens), and its description in the OpenAPI schema."""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from games import streams
from games.errors import InvalidToken
from games.models import Player, TokenRotation
from games.persistence import player_by_token_hash
from games.rotation_replay import replay_end_on_first_use, replay_horizon
from games.tokens import TokenHash, token_hash
from kingscorner.api.throttling import token_window_begin


class BearerToken:
    """A bearer token not looked up yet: the request's user in the views that authenticate and load their
    game in one query (the moves and a new hand, games.persistence.game_load), which refuse a token no player
    has there, with the same 401. `pk` identifies the token (its hash) to the rate limits."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, token: str) -> None:
        self.token_hash = TokenHash(token_hash(token))

    @property
    def pk(self) -> str:
        return self.token_hash.value


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
        return self.authenticated(request, counted=True)

    def authenticated(self, request: Request, *, counted: bool) -> tuple[Player, str] | None:
        """The request's player and token, None without a bearer token. With `counted`, the token's rate
        limit window is counted meanwhile (kingscorner.api.throttling.token_window_begin): sent before the
        token's lookup and answered after it, or, in a view that looks its token up with its game, after
        that read."""
        token = _bearer_token(request, self.keyword)
        if token is None:
            return None
        count = token_window_begin(request, token) if counted else None
        if getattr(_view(request), "looks_up_token_with_game", False):
            # The view's service looks the token up with what it loads (request_bearer): no query here.
            if count is not None:
                count.read_after_next_statement()
            return BearerToken(token), token  # type: ignore[return-value]
        try:
            player = player_by_token_hash(token_hash(token))
        finally:
            if count is not None:
                count.over()
        if player is None:
            player = self._rotated_from(request, token)
        elif player.token_rotated_at >= replay_horizon():
            replay_end_on_first_use(player)
        if player is None:
            raise InvalidToken()
        return player, token

    def _rotated_from(self, request: Request, token: str) -> Player | None:
        """For a view that sets `accepts_rotated_token` (token rotation) only: the player whose token this
        was until a rotation within ROTATION_REPLAY_SECONDS, so that the rotation service can answer a retry
        of that rotation, or refuse a concurrent one with 409 rather than 401. Every other operation refuses
        a replaced token."""
        if not getattr(_view(request), "accepts_rotated_token", False):
            return None
        rotation = (
            TokenRotation.objects.select_related("player")
            .filter(previous_token_hash=token_hash(token), created_at__gte=replay_horizon())
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
        # A bad Authorization header beside a ticket is refused (401), as on every other operation; the
        # ticket's player is the one counted.
        BearerTokenAuthentication().authenticated(request, counted=False)
        return streams.ticket_read(ticket)

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


def request_bearer(request: Request) -> BearerToken:
    """The bearer token of a request to a view that sets `looks_up_token_with_game`."""
    bearer = request.user
    if not isinstance(bearer, BearerToken):
        raise exceptions.NotAuthenticated()
    return bearer


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
