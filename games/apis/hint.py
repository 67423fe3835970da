"""The games API's hint: the moves of sharp's search for the rest of your turn."""

from typing import Any

from drf_spectacular.utils import (
    extend_schema,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from games import selectors
from games.apis.auth import request_player
from games.apis.responses import PlayerApi, response_example
from games.apis.serializers import move_list
from kingscorner.api.openapi import Refusals


class GameHintApi(PlayerApi):
    class GameHintOutputSerializer(serializers.Serializer[Any]):
        """The moves sharp's search would make for the rest of your turn."""

        version = serializers.IntegerField(help_text="The version the hint is for.")
        moves = move_list("The moves, in order, end_turn last.")

    refusals = Refusals(
        "games_hint",
        "not_found",
        "game_not_found",
        "hints_refused_in_ranked_attempt",
        "game_not_started",
        "game_over",
        "hand_over",
        "not_your_turn",
        "attempt_expired",
        token="required",
    )

    @extend_schema(
        operation_id="games_hint",
        summary="Get a hint",
        tags=["games"],
        parameters=refusals.headers(),
        responses={200: GameHintOutputSerializer, **refusals.responses()},
        examples=[response_example("Sharp's turn", "games_hint_response"), *refusals.examples()],
        description="The moves the sharp computer player would make for the rest of your turn, from what "
        "your seat sees; send them to POST moves as they are. Refused (403) in every game at a daily "
        "deal while your ranked attempt at it is unfinished, and (409) when it is not your turn.",
    )
    def get(self, request: Request, game_id: str) -> Response:
        seated = selectors.game_get(game_id=game_id, player=request_player(request))
        hint = selectors.game_hint(game=seated.game, seat=seated.seat)
        return Response(self.GameHintOutputSerializer(hint).data)
