"""The players API: registering, who you are, and replacing your token."""

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import (
    extend_schema,
)
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games import services
from games.apis.auth import request_player, request_token
from games.apis.responses import (
    IDEMPOTENT_REPLAYED_HEADER,
    PlayerApi,
    location_header,
    request_example,
    response_example,
)
from games.models import Player
from games.names import NAME_MAX_LENGTH, NameRefused, name_normalised
from games.rotation_replay import rotation_key_check
from kingscorner.api.fields import StrictCharField, StrictInputSerializer, no_body
from kingscorner.api.headers import (
    IDEMPOTENCY_KEY_PARAMETER,
    idempotency_key,
)
from kingscorner.api.openapi import EMPTY_BODY, NO_BODY, Refusals
from kingscorner.api.output import compiled
from kingscorner.api.throttling import rate_window_carry_over

DISCRIMINATOR_HELP = (
    "Four digits the server drew for you, unique among the players whose names look like yours (the same "
    "skeleton: case, NFKC, variation selectors and Unicode's confusables folded)."
)
DISPLAY_NAME_HELP = "Your name as every view shows it to others: `name#discriminator`."


def player_identity(player: Player) -> dict[str, Any]:
    """A player as the players API shows one: its id, its name, and the discriminator that tells it apart."""
    return {
        "id": player.id,
        "name": player.name,
        "discriminator": str(player.discriminator),
        "display_name": player.display_name,
    }


class PlayerTokenOutputSerializer(serializers.Serializer[Any]):
    """A player with its bearer token."""

    id = serializers.UUIDField()
    name = serializers.CharField(help_text="The name as registered (normalised to NFKC).")
    discriminator = serializers.CharField(help_text=DISCRIMINATOR_HELP)
    display_name = serializers.CharField(help_text=DISPLAY_NAME_HELP)
    token = serializers.CharField(help_text="Shown once: send it as `Authorization: Bearer <token>`.")


class PlayerCreateApi(APIView):
    # Registration takes no token: a stale one left in a client's header must not stand in its way.
    authentication_classes = ()
    permission_classes = (AllowAny,)

    class PlayerCreateInputSerializer(StrictInputSerializer):
        """A new player's name."""

        name = StrictCharField(
            min_length=1,
            max_length=NAME_MAX_LENGTH,
            help_text=f"1 to {NAME_MAX_LENGTH} printable characters, normalised to NFKC with the whitespace "
            "around it dropped. Refused: control, format, private-use or unassigned characters and "
            "separators but the space (Python's str.isprintable); a name without a letter or digit; "
            "invisible Hangul fillers; more than 3 combining marks on one character; a word that mixes "
            "scripts (Cyrillic А in a Latin word).",
        )

        def validate_name(self, name: str) -> str:
            try:
                return name_normalised(name)
            except NameRefused as refused:
                raise serializers.ValidationError(str(refused)) from None

    refusals = Refusals("players_create", "name_crowded", token="none", body="json", database=True)

    @extend_schema(
        operation_id="players_create",
        summary="Register a player",
        tags=["players"],
        auth=[],
        request=PlayerCreateInputSerializer,
        responses={201: PlayerTokenOutputSerializer, **refusals.responses()},
        parameters=[location_header("the player (players/me)"), *refusals.headers()],
        examples=[
            request_example("A player", "players_create_request"),
            response_example("The new player and its token", "players_create_response", 201),
            *refusals.examples(),
        ],
        description="Creates a player and answers with its bearer token, shown this once: only its hash is "
        "stored. Send the token as `Authorization: Bearer <token>` on every request that names you. This "
        "operation takes no token; an Authorization header sent with it is ignored.",
    )
    def post(self, request: Request) -> Response:
        data = self.PlayerCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        player, token = services.player_create(name=data.validated_data["name"])
        return Response(
            PlayerTokenOutputSerializer({**player_identity(player), "token": token}).data,
            status=201,
            headers={"Location": request.build_absolute_uri(reverse("player-me"))},
        )


class PlayerMeApi(PlayerApi):
    class PlayerMeOutputSerializer(serializers.Serializer[Any]):
        """You, as the API knows you."""

        id = serializers.UUIDField()
        name = serializers.CharField(help_text="The name as registered (normalised to NFKC).")
        discriminator = serializers.CharField(help_text=DISCRIMINATOR_HELP)
        display_name = serializers.CharField(help_text=DISPLAY_NAME_HELP)
        created_at = serializers.DateTimeField()

    refusals = Refusals("players_me", token="required")

    @extend_schema(
        operation_id="players_me",
        summary="Who you are",
        tags=["players"],
        responses={200: PlayerMeOutputSerializer, **refusals.responses()},
        parameters=refusals.headers(),
        examples=[response_example("You", "players_me_response"), *refusals.examples()],
        description="The player the token names: a quick way to check that a token works.",
    )
    def get(self, request: Request) -> Response:
        return Response(_PLAYER_ME_RENDERING(request_player(request)))


# One renderer of the player for every response, compiled, as the game view's (games.apis.responses).
_PLAYER_ME_RENDERING = compiled(PlayerMeApi.PlayerMeOutputSerializer())


class PlayerTokenRotateApi(PlayerApi):
    # A token replaced by a rotation still reaches the service here: see BearerTokenAuthentication.
    accepts_rotated_token = True

    refusals = Refusals(
        "players_token_rotate", "invalid_idempotency_key", "token_rotated", token="required", body="empty"
    )

    @extend_schema(
        operation_id="players_token_rotate",
        summary="Replace your token",
        tags=["players"],
        request=EMPTY_BODY,
        responses={200: PlayerTokenOutputSerializer, **refusals.responses()},
        parameters=[IDEMPOTENCY_KEY_PARAMETER, IDEMPOTENT_REPLAYED_HEADER, *refusals.headers()],
        examples=[response_example("Your new token", "players_token_rotate_response"), *refusals.examples()],
        description="Issues a new token and revokes the one this request was sent with at once. "
        + NO_BODY
        + "\n\n"
        "A token is rotated from once: of rotations sent at the same time with one token, one answers with "
        "the new token and the others with 409 `token_rotated`. Send an `Idempotency-Key` (a UUID; any other "
        "is 400 `invalid_idempotency_key`) so that a rotation whose response was lost can be sent again, "
        "with the same (now replaced) token and key, within `ROTATION_REPLAY_SECONDS` (5 minutes) and until "
        "the new token is first used: it answers with the same new token (`Idempotent-Replayed: true`) "
        "instead of locking you out. Any other replay (another key, too late, after the new token was used "
        "or replaced) is 401 `invalid_token`, as the replaced token is everywhere else. The server keeps "
        "that new token only encrypted under a key derived from the replaced token and the Idempotency-Key, "
        "which it does not store.",
    )
    def post(self, request: Request) -> Response:
        no_body(request)
        key = idempotency_key(request)
        rotation_key_check(key)
        rotated = services.player_token_rotate(
            player=request_player(request), token=request_token(request), idempotency_key=key
        )
        if not rotated.replayed:
            rate_window_carry_over(previous_token=request_token(request), token=rotated.token)
        player = request_player(request)
        body = {**player_identity(player), "token": rotated.token}
        headers = {"Idempotent-Replayed": "true"} if rotated.replayed else None
        return Response(PlayerTokenOutputSerializer(body).data, headers=headers)
