"""The games API's tables with several people: joining by invitation, starting, issuing and revoking the
invitation, leaving, replacing an absent person's seat, and the rematch."""

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games import selectors, services
from games.apis.auth import request_player, request_player_or_none
from games.apis.responses import (
    CREATED_ETAG_HEADER,
    ETAG_HEADER,
    PlayerApi,
    absolute_invitation_links,
    change_response,
    game_response,
    location_header,
    response_example,
)
from games.apis.serializers import GameViewSerializer, InvitationPreviewSerializer, InvitationSerializer
from kingscorner.api.examples import EXAMPLES
from kingscorner.api.fields import no_body
from kingscorner.api.openapi import EMPTY_BODY, NO_BODY, Refusals


class InvitationJoinApi(APIView):
    """An invitation: GET shows the table to whoever holds the code (a token is optional), POST seats you."""

    preview_refusals = Refusals("invitations_get", "invitation_not_found", token="optional")
    refusals = Refusals(
        "invitations_join",
        "invitation_not_found",
        "table_full",
        "game_started",
        token="required",
        body="empty",
    )

    def get_permissions(self) -> list[BasePermission]:
        # Looking needs no token: the code is the capability, and a person decides before registering.
        return [AllowAny()] if self.request.method in ("GET", "HEAD", "OPTIONS") else [IsAuthenticated()]

    @extend_schema(
        operation_id="invitations_get",
        summary="See an invitation",
        tags=["tables"],
        parameters=preview_refusals.headers(),
        responses={200: InvitationPreviewSerializer, **preview_refusals.responses()},
        examples=[
            response_example("A table waiting for its second person", "invitations_get_response"),
            *preview_refusals.examples(),
        ],
        description="What the invitation is for, for whoever holds its code, before they join: who made "
        "the table (`inviter`), its seats (a person's free seat has no name), `free_seats`, the rules, the "
        "target and the turn clock, and its `status` (it takes people while `waiting`). No token is needed; "
        "with one, `you` marks your seat and `game` names the game once you sit there. No card and no seed "
        "is shown. `url` is the page a person opens in a browser (`/play/join/{code}`), `join` this "
        "endpoint, to POST.\n\n"
        "Refused: an unknown or revoked code (404 `invitation_not_found`, as a join is).",
    )
    def get(self, request: Request, code: str) -> Response:
        preview = selectors.invitation_preview(code=code, player=request_player_or_none(request))
        rendered = dict(InvitationPreviewSerializer(preview).data)
        absolute_invitation_links(rendered, request)
        return Response(rendered)

    @extend_schema(
        operation_id="invitations_join",
        summary="Take a seat by invitation",
        tags=["tables"],
        request=EMPTY_BODY,
        parameters=[ETAG_HEADER, *refusals.headers()],
        responses={200: GameViewSerializer, **refusals.responses()},
        examples=[
            response_example("The last seat taken: the table starts", "invitations_join_response"),
            *refusals.examples(),
        ],
        description="Seats you in the first free person's seat of the table the invitation is for, and "
        "answers with the game as your seat sees it. "
        + NO_BODY
        + " When yours is the last person's seat, the "
        "table starts: the first hand is dealt and `events` tell it. You hold one seat of a game at most: "
        "sent again, it answers with your view again.\n\n"
        "Refused: an unknown or revoked code (404 `invitation_not_found`; which of the two, and the game, "
        "are not told), a table whose people are all seated (409 `table_full`), one that has started "
        "otherwise, its creator having started it with computers in the free seats (409 `game_started`).",
    )
    def post(self, request: Request, code: str) -> Response:
        no_body(request)
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
        body="empty",
    )

    @extend_schema(
        operation_id="games_start",
        summary="Start a waiting table",
        tags=["tables"],
        request=EMPTY_BODY,
        parameters=[ETAG_HEADER, *refusals.headers()],
        responses={200: GameViewSerializer, **refusals.responses()},
        examples=[
            response_example("Started with a computer in the free seat", "games_start_response"),
            *refusals.examples(),
        ],
        description="The creator starts a waiting table without waiting for every person: computers at "
        "the table's `fill_level` take the seats still free, the first hand is dealt and the computers "
        "before the first person play. " + NO_BODY + " Only the creator may (403 `not_creator`), once (409 "
        "`game_started`).",
    )
    def post(self, request: Request, game_id: str) -> Response:
        no_body(request)
        change = services.game_start(game_id=game_id, player=request_player(request))
        return change_response(change, request)


class GameInvitationApi(PlayerApi):
    issue_refusals = Refusals(
        "games_invitation_issue",
        "not_found",
        "game_not_found",
        "not_creator",
        "game_started",
        token="required",
        body="empty",
    )
    refusals = Refusals(
        "games_invitation_revoke", "not_found", "game_not_found", "not_creator", token="required"
    )

    @extend_schema(
        operation_id="games_invitation_issue",
        summary="Issue a new invitation link",
        tags=["tables"],
        request=EMPTY_BODY,
        parameters=[location_header("the new invitation (its `join`)"), *issue_refusals.headers()],
        responses={
            201: InvitationSerializer,
            200: OpenApiResponse(InvitationSerializer, description="The link was live: the same one."),
            **issue_refusals.responses(),
        },
        examples=[
            response_example("A new link after a revoke", "games_invitation_issue_response", 201),
            response_example("The link is live: the same one", "games_invitation_issue_response"),
            *issue_refusals.examples(),
        ],
        description="The creator (`creator_seat`) gives a waiting table a new invitation link after a "
        "revoke: 201 with the link, as the game's `invitation` now shows it. The revoked code stays dead. "
        "While the link is live it is kept: 200 with it. " + NO_BODY,
    )
    def post(self, request: Request, game_id: str) -> Response:
        no_body(request)
        issued = services.invitation_issue(game_id=game_id, player=request_player(request))
        body = absolute_invitation_links(dict(InvitationSerializer(issued.invitation).data), request)
        if not issued.created:
            return Response(body)
        return Response(body, status=201, headers={"Location": body["join"]})

    @extend_schema(
        operation_id="games_invitation_revoke",
        summary="Revoke the invitation link",
        tags=["tables"],
        parameters=refusals.headers(),
        responses={204: OpenApiResponse(description="Revoked."), **refusals.responses()},
        examples=refusals.examples(),
        description="The creator (`creator_seat`) revokes the table's invitation link: from now on it is a "
        "404 `invitation_not_found`, and the game shows no invitation (POST invitation issues a new one). "
        "People already seated keep their seats. Revoking again changes nothing (204).",
    )
    def delete(self, request: Request, game_id: str) -> Response:
        services.invitation_revoke(game_id=game_id, player=request_player(request))
        return Response(status=204)


class GameLeaveApi(PlayerApi):
    refusals = Refusals(
        "games_leave",
        "leave_refused_in_ranked_attempt",
        "not_found",
        "game_not_found",
        token="required",
        body="empty",
    )

    @extend_schema(
        operation_id="games_leave",
        summary="Leave the table",
        tags=["tables"],
        request=EMPTY_BODY,
        parameters=refusals.headers(),
        responses={204: OpenApiResponse(description="You left."), **refusals.responses()},
        examples=refusals.examples(),
        description="You leave the game; it is no longer yours (a 404 from now on). "
        + NO_BODY
        + " A computer "
        "at normal takes your seat and the game goes on: when it was your turn, the computer plays it at "
        "once (and the computers after it, up to the next person's turn). At a table still waiting your "
        "seat is free again for the invitation (the creator's seat goes to a computer). The event log says "
        "who left (`seat_left`). A table whose last person leaves is not played on. A creator's role "
        "(`creator_seat`) passes to the next seated person after their seat; a waiting table left by its "
        "last person closes (finished, its link revoked). A ranked daily attempt's game cannot be left "
        "(403 `leave_refused_in_ranked_attempt`).",
    )
    def post(self, request: Request, game_id: str) -> Response:
        no_body(request)
        services.seat_leave(game_id=game_id, player=request_player(request))
        return Response(status=204)


class GameRematchApi(PlayerApi):
    refusals = Refusals(
        "games_rematch", "not_found", "game_not_found", "game_not_over", token="required", body="empty"
    )

    @extend_schema(
        operation_id="games_rematch",
        summary="Play again at the same table",
        tags=["tables"],
        request=EMPTY_BODY,
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
        no_body(request)
        change = services.game_rematch(game_id=game_id, player=request_player(request))
        if not change.created:
            return change_response(change, request)
        location = request.build_absolute_uri(reverse("game-detail", args=[change.game.id]))
        return game_response(change.view, request=request, status=201, headers={"Location": location})


class GameSeatReplaceApi(PlayerApi):
    refusals = Refusals(
        "games_seat_replace",
        "not_found",
        "game_not_found",
        "seat_not_found",
        "game_not_started",
        "game_over",
        "hand_over",
        "seat_not_a_person",
        "seat_not_abandoned",
        "seat_is_yours",
        "table_has_clock",
        token="required",
        body="empty",
        members={
            "seat_not_abandoned": {
                "replaceable_at": serializers.DateTimeField(
                    required=False,
                    allow_null=True,
                    help_text="seat_not_abandoned: when the seat may be replaced; null: not its turn.",
                )
            }
        },
        example_members={
            "seat_not_abandoned": {
                "replaceable_at": EXAMPLES["games_seat_replace_not_abandoned"]["replaceable_at"]
            }
        },
        example_details={"seat_not_abandoned": EXAMPLES["games_seat_replace_not_abandoned"]["detail"]},
    )

    @extend_schema(
        operation_id="games_seat_replace",
        summary="Hand an absent person's seat to a computer",
        tags=["tables"],
        request=EMPTY_BODY,
        parameters=[
            OpenApiParameter("seat", int, OpenApiParameter.PATH, description="The seat to replace, from 0."),
            ETAG_HEADER,
            OpenApiParameter(
                "Retry-After",
                {"type": "integer", "minimum": 1},
                OpenApiParameter.HEADER,
                response=[409],
                description="With `seat_not_abandoned` on the seat's turn: seconds to `replaceable_at`.",
            ),
            *refusals.headers(),
        ],
        responses={200: GameViewSerializer, **refusals.responses()},
        examples=[
            response_example("The computer took the seat and played its turn", "games_seat_replace_response"),
            *refusals.examples(),
        ],
        description="At a table without a clock, once the person to move has been so for the table's "
        "`abandon_seconds` (`replaceable_at` in the view), any other seated person may hand their seat to a "
        "computer at normal, which plays the turn at once (and the computers after it theirs): 200 with your "
        "view, its `events` from `seat_replaced` on. The replaced person is seated no more, as after a "
        "leave; a creator's role passes on. Of this and the absent person's move or leave exactly one "
        "applies. " + NO_BODY,
    )
    def post(self, request: Request, game_id: str, seat: int) -> Response:
        no_body(request)
        change = services.seat_replace(game_id=game_id, player=request_player(request), seat=seat)
        return change_response(change, request)
