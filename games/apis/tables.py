"""The games API's tables with several people: joining by invitation, starting, revoking the invitation,
leaving, and the rematch."""

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from games import services
from games.apis.responses import (
    CREATED_ETAG_HEADER,
    ETAG_HEADER,
    PlayerApi,
    change_response,
    game_response,
    location_header,
    response_example,
)
from games.apis.serializers import GameViewSerializer
from games.auth import request_player
from kingscorner.api.openapi import Refusals


class InvitationJoinApi(PlayerApi):
    refusals = Refusals(
        "invitations_join",
        "invitation_not_found",
        "table_full",
        "game_started",
        token="required",
        body="ignored",
    )

    @extend_schema(
        operation_id="invitations_join",
        summary="Take a seat by invitation",
        tags=["tables"],
        request=None,
        parameters=[ETAG_HEADER, *refusals.headers()],
        responses={200: GameViewSerializer, **refusals.responses()},
        examples=[
            response_example("The last seat taken: the table starts", "invitations_join_response"),
            *refusals.examples(),
        ],
        description="Seats you in the first free person's seat of the table the invitation is for, and "
        "answers with the game as your seat sees it. No body. When yours is the last person's seat, the "
        "table starts: the first hand is dealt and `events` tell it. You hold one seat of a game at most: "
        "sent again, it answers with your view again.\n\n"
        "Refused: an unknown or revoked code (404 `invitation_not_found`; which of the two, and the game, "
        "are not told), a table whose people are all seated (409 `table_full`), one that has started "
        "otherwise, its creator having started it with computers in the free seats (409 `game_started`).",
    )
    def post(self, request: Request, code: str) -> Response:
        joined = services.invitation_join(code=code, player=request_player(request))
        return game_response(joined.view, request=request)


class GameStartApi(PlayerApi):
    refusals = Refusals(
        "games_start",
        "not_found",
        "game_not_found",
        "not_creator",
        "game_started",
        token="required",
        body="ignored",
    )

    @extend_schema(
        operation_id="games_start",
        summary="Start a waiting table",
        tags=["tables"],
        request=None,
        parameters=[ETAG_HEADER, *refusals.headers()],
        responses={200: GameViewSerializer, **refusals.responses()},
        examples=[
            response_example("Started with a computer in the free seat", "games_start_response"),
            *refusals.examples(),
        ],
        description="The creator starts a waiting table without waiting for every person: computers at "
        "the table's `fill_level` take the seats still free, the first hand is dealt and the computers "
        "before the first person play. No body. Only the creator may (403 `not_creator`), once (409 "
        "`game_started`).",
    )
    def post(self, request: Request, game_id: str) -> Response:
        change = services.game_start(game_id=game_id, player=request_player(request))
        return change_response(change, request)


class GameInvitationApi(PlayerApi):
    refusals = Refusals(
        "games_invitation_revoke", "not_found", "game_not_found", "not_creator", token="required"
    )

    @extend_schema(
        operation_id="games_invitation_revoke",
        summary="Revoke the invitation link",
        tags=["tables"],
        parameters=refusals.headers(),
        responses={204: OpenApiResponse(description="Revoked."), **refusals.responses()},
        examples=refusals.examples(),
        description="The creator revokes the table's invitation link: from now on it is a 404 "
        "`invitation_not_found`, and the game shows no invitation. People already seated keep their "
        "seats. Revoking again changes nothing (204).",
    )
    def delete(self, request: Request, game_id: str) -> Response:
        services.invitation_revoke(game_id=game_id, player=request_player(request))
        return Response(status=204)


class GameLeaveApi(PlayerApi):
    refusals = Refusals("games_leave", "not_found", "game_not_found", token="required", body="ignored")

    @extend_schema(
        operation_id="games_leave",
        summary="Leave the table",
        tags=["tables"],
        request=None,
        parameters=refusals.headers(),
        responses={204: OpenApiResponse(description="You left."), **refusals.responses()},
        examples=refusals.examples(),
        description="You leave the game; it is no longer yours (a 404 from now on). No body. A computer "
        "at normal takes your seat and the game goes on: when it was your turn, the computer plays it at "
        "once (and the computers after it, up to the next person's turn). At a table still waiting your "
        "seat is free again for the invitation (the creator's seat goes to a computer). The event log says "
        "who left (`seat_left`). A table whose last person leaves is not played on.",
    )
    def post(self, request: Request, game_id: str) -> Response:
        services.seat_leave(game_id=game_id, player=request_player(request))
        return Response(status=204)


class GameRematchApi(PlayerApi):
    refusals = Refusals(
        "games_rematch", "not_found", "game_not_found", "game_not_over", token="required", body="ignored"
    )

    @extend_schema(
        operation_id="games_rematch",
        summary="Play again at the same table",
        tags=["tables"],
        request=None,
        parameters=[
            CREATED_ETAG_HEADER,
            ETAG_HEADER,
            location_header("the new game"),
            *refusals.headers(),
        ],
        responses={
            201: GameViewSerializer,
            200: OpenApiResponse(GameViewSerializer, description="The rematch asked for before."),
            **refusals.responses(),
        },
        examples=[
            response_example("The new game, dealt", "games_rematch_response", 201),
            response_example("Asked again: the same game", "games_rematch_again_response"),
            *refusals.examples(),
        ],
        description="Once a game is finished, anyone seated starts the next game at the same table: the "
        "people in their seats, the computers at their levels, the same rules, target and clock, a new "
        "seed. It is dealt at once (201, with Location). Asked again, by anyone seated, it is the same game "
        "(200); the finished game's `rematch` names it. 409 `game_not_over` while the game is not finished.",
    )
    def post(self, request: Request, game_id: str) -> Response:
        change = services.game_rematch(game_id=game_id, player=request_player(request))
        if not change.created:
            return change_response(change, request)
        location = request.build_absolute_uri(reverse("game-detail", args=[change.game.id]))
        return game_response(change.view, request=request, status=201, headers={"Location": location})
