"""The games API's writes to a game in play: moves, and dealing the next hand."""

from typing import Any

from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
)
from rest_framework.request import Request
from rest_framework.response import Response

from games import services
from games.apis.auth import request_bearer
from games.apis.responses import (
    GAME_WRITE_CODES,
    GAME_WRITE_PARAMETERS,
    MOVE_READ_CODES,
    MOVE_REFUSAL_CODES,
    PlayerApi,
    change_response,
    current_member,
    move_index_members,
    request_example,
    response_example,
)
from games.apis.serializers import GameViewSerializer, MoveRequestListField
from games.services.players import token_checked_on_refusal
from kingscorner.api.examples import EXAMPLES
from kingscorner.api.fields import StrictInputSerializer, StrictIntegerField
from kingscorner.api.headers import (
    expected_version,
    idempotency_key,
)
from kingscorner.api.openapi import Refusals


def _plain_version(value: Any) -> bool:
    """A version the input serializers take as it is: absent or null, or a JSON integer from 1."""
    return value is None or (type(value) is int and value >= 1)


def _moves_input(request: Request, serializer: type[StrictInputSerializer]) -> tuple[list[Any], int | None]:
    """The moves and expected_version of a moves request. A body of the plain shape (only those members, 1 to
    MAX_MOVES moves in a list, the version absent, null or an integer from 1) is taken as it is, which is
    what the serializer would make of it: the engine reads each move (services) and names what is wrong with
    it. Any other body goes through the serializer, which refuses it exactly as it always has (or takes it,
    as it takes 2.0 for 2)."""
    data = request.data
    if isinstance(data, dict) and data.keys() <= _MOVES_MEMBERS:
        moves = data.get("moves")
        version = data.get("expected_version")
        if type(moves) is list and 1 <= len(moves) <= services.MAX_MOVES and _plain_version(version):
            return moves, version
    checked = serializer(data=data)
    checked.is_valid(raise_exception=True)
    return checked.validated_data["moves"], checked.validated_data.get("expected_version")


def _version_input(request: Request, serializer: type[StrictInputSerializer]) -> int | None:
    """The expected_version of a body that holds only that, as _moves_input reads a moves request."""
    data = request.data
    if isinstance(data, dict) and data.keys() <= _VERSION_MEMBERS:
        version = data.get("expected_version")
        if _plain_version(version):
            return version
    checked = serializer(data=data)
    checked.is_valid(raise_exception=True)
    version = checked.validated_data.get("expected_version")
    return version if version is None else int(version)


_MOVES_MEMBERS = frozenset({"moves", "expected_version"})
_VERSION_MEMBERS = frozenset({"expected_version"})


class GameMovesApi(PlayerApi):
    # The token is looked up with the game, in the service's one read.
    looks_up_token_with_game = True

    class GameMovesInputSerializer(StrictInputSerializer):
        """Your moves, and the version you made them against."""

        moves = MoveRequestListField(
            help_text=f"1 to {services.MAX_MOVES} moves, applied in order, all or none; more is a 413."
        )
        expected_version = StrictIntegerField(
            min_value=1, required=False, allow_null=True, help_text="The same as If-Match."
        )

    refusals = Refusals(
        "games_moves",
        *GAME_WRITE_CODES,
        "too_many_moves",
        *MOVE_READ_CODES,
        "game_not_started",
        "game_over",
        "hand_over",
        "not_your_turn",
        "attempt_expired",
        *MOVE_REFUSAL_CODES,
        token="required",
        body="json",
        members={**current_member(), **move_index_members((*MOVE_READ_CODES, *MOVE_REFUSAL_CODES))},
        example_members={
            "version_conflict": {"current": EXAMPLES["games_moves_version_conflict"]["current"]},
            **{code: {"move_index": 1} for code in (*MOVE_READ_CODES, *MOVE_REFUSAL_CODES)},
        },
        example_details={
            "version_conflict": EXAMPLES["games_moves_version_conflict"]["detail"],
            "does_not_fit": EXAMPLES["games_moves_does_not_fit"]["detail"],
        },
    )

    @extend_schema(
        operation_id="games_moves",
        summary="Make moves",
        tags=["games"],
        parameters=[*GAME_WRITE_PARAMETERS, *refusals.headers()],
        request=GameMovesInputSerializer,
        responses={200: GameViewSerializer, **refusals.responses()},
        examples=[
            request_example("A whole turn", "games_moves_request"),
            response_example(
                "After the turn: what the computer players did, and your next turn", "games_moves_response"
            ),
            *refusals.examples(),
        ],
        description="Applies your moves in order, all or none, as one new version of the game. A `play` "
        "without `to` goes where sharp would put it, except where hints are refused (a ranked daily attempt "
        "unfinished): there on the first pile, in the order N E S W NE SE SW NW, that takes it. "
        "After an `end_turn` the computer players take their "
        "turns at once, and `events` tells what they did, up to your next turn's draw (at a table with "
        "other people, up to the next person's turn: another seat's moves are 409 `not_your_turn`).\n\n"
        "Name the version you played against, in `expected_version` or If-Match: a stale one is a 409 "
        "`version_conflict` with the game as it is in `current`. A move the engine cannot read is a 400, "
        "one it refuses a 422; either way `code` is the engine's reason and `move_index` the move's place, "
        "and nothing was applied. An `Idempotency-Key` makes a retry answer with the first response.",
    )
    def post(self, request: Request, game_id: str) -> Response:
        bearer = request_bearer(request)
        with token_checked_on_refusal(bearer.token_hash):
            moves, body_version = _moves_input(request, self.GameMovesInputSerializer)
            version = expected_version(request, body_version)
            key = idempotency_key(request)
        change = services.game_moves_apply(
            game_id=game_id,
            player=bearer.token_hash,
            moves=moves,
            expected_version=version,
            idempotency_key=key,
        )
        return change_response(change, request)


class GameHandDealApi(PlayerApi):
    looks_up_token_with_game = True

    class GameHandDealInputSerializer(StrictInputSerializer):
        """The version you deal against; the body may be left out."""

        expected_version = StrictIntegerField(
            min_value=1, required=False, allow_null=True, help_text="The same as If-Match."
        )

    refusals = Refusals(
        "games_hands_deal",
        *GAME_WRITE_CODES,
        "game_not_started",
        "hand_in_progress",
        "game_over",
        "attempt_expired",
        token="required",
        body="json",
        members=current_member(),
        example_members={
            "version_conflict": {"current": EXAMPLES["games_moves_version_conflict"]["current"]}
        },
    )

    @extend_schema(
        operation_id="games_hands_deal",
        summary="Deal the next hand",
        tags=["games"],
        parameters=[*GAME_WRITE_PARAMETERS, *refusals.headers()],
        request=GameHandDealInputSerializer,
        responses={200: GameViewSerializer, **refusals.responses()},
        examples=[
            OpenApiExample("Against version 9", value={"expected_version": 9}, request_only=True),
            response_example("The next hand, dealt", "games_hands_deal_response"),
            *refusals.examples(),
        ],
        description="Deals the next hand when one is over (`status` is `hand_over`) and the game is not; "
        "anyone seated may deal it. The deal passes one seat to the left, and the computer players before "
        "the first person take their turns. "
        "Otherwise 409: `hand_in_progress` or `game_over`.",
    )
    def post(self, request: Request, game_id: str) -> Response:
        bearer = request_bearer(request)
        with token_checked_on_refusal(bearer.token_hash):
            version = expected_version(request, _version_input(request, self.GameHandDealInputSerializer))
            key = idempotency_key(request)
        change = services.game_hand_deal(
            game_id=game_id, player=bearer.token_hash, expected_version=version, idempotency_key=key
        )
        return change_response(change, request)
