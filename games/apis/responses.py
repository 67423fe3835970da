"""How the games API answers: a game view rendered with its ETag, the response headers and problem members
its operations document, the codes they share, and examples from real responses."""

from typing import Any

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
)
from rest_framework import exceptions, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games import services
from games.apis.serializers import GameViewSerializer
from games.shapes import GameView
from kingscorner.api.examples import EXAMPLES
from kingscorner.api.headers import IDEMPOTENCY_KEY_PARAMETER, IF_MATCH_PARAMETER
from kingscorner.api.openapi import response_header
from kingscorner.api.output import compiled
from kingscorner.api.throttling import retry_after, token_window_settled

# One game view renderer for every response, as the moves and events have theirs (serializers.py), compiled
# (kingscorner.api.output).
_GAME_VIEW_RENDERING = compiled(GameViewSerializer())


def render_game_view(view: GameView) -> dict[str, Any]:
    """The game view as GameViewSerializer renders it."""
    rendered: dict[str, Any] = _GAME_VIEW_RENDERING(view)
    return rendered


def etag(version: int) -> str:
    return f'"{version}"'


def absolute_invitation_links(invitation: dict[str, Any], request: Request) -> dict[str, Any]:
    """A rendered invitation names its page and its endpoint by their paths; a client is given whole links."""
    for link in ("url", "join"):
        invitation[link] = request.build_absolute_uri(invitation[link])
    return invitation


def game_response(
    view: GameView,
    *,
    request: Request,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    rendered = render_game_view(view)
    if rendered.get("invitation"):
        absolute_invitation_links(rendered["invitation"], request)
    return Response(rendered, status=status, headers={"ETag": etag(view["version"]), **(headers or {})})


def change_response(change: services.GameChange, request: Request) -> Response:
    return game_response(
        change.view,
        request=request,
        headers={"Idempotent-Replayed": "true"} if change.replayed else None,
    )


ETAG_HEADER = response_header(
    "ETag", 'The game\'s version, as an entity tag: "3". Send it as If-Match.', [200]
)


CREATED_ETAG_HEADER = response_header("ETag", 'The new game\'s version, as an entity tag: "1".', [201])


CONFLICT_ETAG_HEADER = OpenApiParameter(
    "ETag",
    str,
    OpenApiParameter.HEADER,
    response=[409],
    description='Sent with `version_conflict` only: the version the game is at, as an entity tag: "4".',
)


IDEMPOTENT_REPLAYED_HEADER = OpenApiParameter(
    "Idempotent-Replayed",
    {"type": "string", "enum": ["true"]},
    OpenApiParameter.HEADER,
    response=[200],
    description="Sent, as `true`, only when this is the stored first response to an earlier request with "
    "the same Idempotency-Key: nothing was applied again.",
)
# The headers of a versioned write to a game in play (moves, a new hand): its guards and what it answers.
GAME_WRITE_PARAMETERS = [
    IF_MATCH_PARAMETER,
    IDEMPOTENCY_KEY_PARAMETER,
    ETAG_HEADER,
    CONFLICT_ETAG_HEADER,
    IDEMPOTENT_REPLAYED_HEADER,
]


def location_header(what: str) -> OpenApiParameter:
    return response_header("Location", f"The URL of {what}.", [201], {"type": "string", "format": "uri"})


def current_member() -> dict[str, dict[str, serializers.Field[Any, Any, Any, Any]]]:
    return {
        "version_conflict": {
            "current": GameViewSerializer(
                required=False, help_text="version_conflict: the game as it is now."
            )
        }
    }


def move_index_members(codes: tuple[str, ...]) -> dict[str, dict[str, serializers.Field[Any, Any, Any, Any]]]:
    return {
        code: {
            "move_index": serializers.IntegerField(
                required=False, help_text="A refused move: its index in the request's `moves`, from 0."
            )
        }
        for code in codes
    }


class PlayerApi(APIView):
    permission_classes = (IsAuthenticated,)

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Any:
        # A view that reads its rate limit count after its first database statement, and answered without
        # one, reads it here: past the limit it is refused as RateLimit refuses.
        if getattr(self, "looks_up_token_with_game", False):
            wait = token_window_settled(request)
            if wait is not None:
                response = self.handle_exception(exceptions.Throttled(wait=retry_after(wait)))
        return super().finalize_response(request, response, *args, **kwargs)


def _example(name: str, key: str, **kwargs: Any) -> OpenApiExample:
    return OpenApiExample(name, value=EXAMPLES[key], **kwargs)


def response_example(name: str, key: str, status: int = 200) -> OpenApiExample:
    return _example(name, key, response_only=True, status_codes=[str(status)])


def request_example(name: str, key: str) -> OpenApiExample:
    return _example(name, key, request_only=True)


RULES_CODES = (
    "invalid_rules",
    "unknown_rule_set",
    "unknown_rule_option",
    "invalid_rule_value",
    "incompatible_rules",
)


# A move the engine cannot read (400) or refuses in the game as it is (422); either names its `move_index`.
MOVE_READ_CODES = ("invalid_move", "invalid_card", "unknown_pile")


MOVE_REFUSAL_CODES = (
    "card_not_in_hand",
    "does_not_fit",
    "nothing_on_ace",
    "corner_needs_king",
    "no_king_on_empty_side",
    "corner_pile_cannot_move",
    "same_pile",
    "empty_pile",
    "no_pile_into_empty_space",
)


# What any write to a game may be refused for: its headers, the game, its version, its Idempotency-Key.
GAME_WRITE_CODES = (
    "invalid_if_match",
    "version_mismatch",
    "invalid_idempotency_key",
    "not_found",
    "game_not_found",
    "version_conflict",
    "idempotency_key_reused",
)
