"""The analysis of any position a player could see, with nothing stored."""

from typing import Any

from drf_spectacular.utils import (
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games import selectors
from games.apis.auth import request_player_or_none
from games.apis.responses import RULES_CODES, request_example, response_example
from games.apis.serializers import CARD_LIST_INPUT_SCHEMA, CardListInputField, RulesField, move_list
from games.engine import DECK, PILES, make_rules
from kingscorner.api.fields import StrictInputSerializer, StrictIntegerField
from kingscorner.api.openapi import Refusals


@extend_schema_field(
    {
        "type": "object",
        "properties": {name: CARD_LIST_INPUT_SCHEMA for name in PILES},
        "additionalProperties": False,
    }
)
class PilesInputField(serializers.DictField):
    """Pile name to cards, bottom to top; only the eight piles are named."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, dict):
            unknown = sorted(str(name) for name in set(data) - set(PILES))
            if unknown:
                raise serializers.ValidationError(
                    {name: [f"Not a pile: the piles are {', '.join(PILES)}."] for name in unknown}
                )
        value: dict[str, Any] = super().to_internal_value(data)
        return value


POSITION_CODES = (
    "duplicate_card",
    "too_many_cards",
    "pile_out_of_sequence",
    "corner_without_king",
    "side_pile_starts_with_king",
)


class AnalysisApi(APIView):
    permission_classes = (AllowAny,)

    class AnalysisInputSerializer(StrictInputSerializer):
        """A position as a player sees it: the rules, a hand, the piles and the stock's size."""

        rules = RulesField(required=False)
        hand = CardListInputField(help_text="Your cards.")
        piles = PilesInputField(
            child=CardListInputField(),
            required=False,
            help_text="Pile name to cards, bottom to top; missing ones are empty.",
        )
        stock = StrictIntegerField(
            min_value=0,
            max_value=len(DECK),
            required=False,
            help_text="Cards left in the stock; with the hand and the piles, at most 52 cards in all.",
        )

    class AnalysisOutputSerializer(serializers.Serializer[Any]):
        """The moves of a position."""

        legal_moves = move_list("Every legal move, end_turn last.")
        best_turn = move_list("The moves sharp's search would make for the rest of the turn.")

    refusals = Refusals(
        "analysis",
        "analysis_refused_in_ranked_attempt",
        "invalid_card",
        *RULES_CODES,
        *POSITION_CODES,
        token="optional",
        body="json",
    )

    @extend_schema(
        operation_id="analysis",
        summary="Analyse a position",
        tags=["analysis"],
        request=AnalysisInputSerializer,
        responses={200: AnalysisOutputSerializer, **refusals.responses()},
        parameters=refusals.headers(),
        examples=[
            request_example("A position", "analysis_request"),
            response_example("Its moves", "analysis_response"),
            *refusals.examples(),
        ],
        description="The legal moves and sharp's best turn for a position you send; nothing is stored. "
        "A position no game can reach is refused with 422 and a code naming the fault: a card in two "
        "places, more cards than the deck, a pile that does not descend one rank at a time in "
        "alternating colours, or a pile that starts with a card its space does not take under the rules. "
        "A token is optional; one that is sent must be valid. Refused (403) for a caller with an "
        "unfinished ranked daily attempt: the server offers no help during one.",
    )
    def post(self, request: Request) -> Response:
        data = self.AnalysisInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        analysis = selectors.position_analysis(
            player=request_player_or_none(request),
            rules=make_rules(values.get("rules")),
            hand=values["hand"],
            piles=values.get("piles", {}),
            stock=values.get("stock", 0),
        )
        return Response(self.AnalysisOutputSerializer(analysis).data)
