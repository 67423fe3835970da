"""The daily deal's API views: the deal of a day, attempts at it, its leaderboard, a player's history."""

import re
from datetime import date
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from daily import clock, selectors, services
from daily.errors import InvalidDate
from games.apis import GameViewSerializer
from games.selectors import game_view
from kingscorner.api import problem_responses

_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

DAY_PARAMETER = OpenApiParameter(
    "day",
    OpenApiTypes.DATE,
    OpenApiParameter.PATH,
    pattern=f"^{_DAY.pattern}$",
    description="A UTC day, YYYY-MM-DD. A malformed or impossible date is 400 `invalid_date`; a day not "
    "started yet, or before the first deal, is 404 `no_daily_deal`.",
)


def _parse_day(text: str) -> date:
    try:
        if _DAY.fullmatch(text):
            return date.fromisoformat(text)
    except ValueError:
        pass
    raise InvalidDate()


class DailyOpponentSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    name = serializers.CharField()
    level = serializers.CharField()


class DailyAttemptSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    game_id = serializers.UUIDField()
    ranked = serializers.BooleanField()
    started_at = serializers.DateTimeField()


class DailyStandingSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    result = serializers.IntegerField()
    turns = serializers.IntegerField()
    finished_at = serializers.DateTimeField()
    percentile = serializers.FloatField(
        help_text="The percentage of the day's ranked results at or below this one, this one included."
    )
    count = serializers.IntegerField(help_text="The number of ranked results of the day.")


class DailyDealOutputSerializer(serializers.Serializer):
    date = serializers.DateField()
    number = serializers.IntegerField()
    rules = serializers.DictField()
    opponents = DailyOpponentSerializer(many=True)
    commitment = serializers.CharField(help_text="SHA-256 of the seed, in hex.")
    seed = serializers.CharField(
        allow_null=True,
        help_text="Null until `seed_revealed_at`, when the day is over for the leaderboard.",
    )
    seed_revealed_at = serializers.DateTimeField(
        help_text="When the seed is revealed and the day's ranked attempts close: the next UTC midnight "
        "plus the finishing grace period. A ranked attempt still unfinished then is recorded as it stands."
    )
    next_deal_in = serializers.IntegerField(help_text="Seconds until the next deal starts.")


class DailyDealForPlayerOutputSerializer(DailyDealOutputSerializer):
    """The deal as an authenticated caller sees it: with their attempts and ranked result."""

    attempts = DailyAttemptSummarySerializer(
        many=True, required=False, help_text="Authenticated callers only."
    )
    result = DailyStandingSerializer(
        allow_null=True, required=False, help_text="The caller's ranked result; authenticated callers only."
    )


def _deal_response(request: Request, day: date) -> Response:
    deal = services.daily_deal_get_started(day=day)
    view = selectors.daily_deal_view(deal=deal, player=request.user)
    serializer = DailyDealOutputSerializer if request.user is None else DailyDealForPlayerOutputSerializer
    return Response(serializer(view).data)


class DailyTodayApi(APIView):
    @extend_schema(
        operation_id="daily_today",
        responses={200: DailyDealForPlayerOutputSerializer, **problem_responses(404)},
    )
    def get(self, request: Request) -> Response:
        return _deal_response(request, clock.today())


class DailyDayApi(APIView):
    @extend_schema(
        operation_id="daily_day",
        parameters=[DAY_PARAMETER],
        responses={200: DailyDealForPlayerOutputSerializer, **problem_responses(400, 404)},
    )
    def get(self, request: Request, day: str) -> Response:
        return _deal_response(request, _parse_day(day))


class DailyAttemptCreateApi(APIView):
    permission_classes = [IsAuthenticated]

    class DailyAttemptOutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        ranked = serializers.BooleanField()
        game = GameViewSerializer(help_text="The game as the player's seat sees it.")

    @extend_schema(
        operation_id="daily_attempt_create",
        parameters=[DAY_PARAMETER],
        request=None,
        responses={
            201: DailyAttemptOutputSerializer,
            **problem_responses(400, 404),
        },
        description=(
            "Starts a game on the deal of the day. Your first attempt at today's deal is ranked; later ones, "
            "and any at an earlier day's deal, are unranked practice. Hints are refused in every game at the "
            "deal while your ranked attempt at it is unfinished."
        ),
    )
    def post(self, request: Request, day: str) -> Response:
        attempt = services.attempt_start(player=request.user, day=_parse_day(day))
        # The game exactly as the games API renders it (the serializer above only describes it), with the
        # events POST /games gives a new game: the deal and what happened before the player's turn.
        game = game_view(game=attempt.game, player=request.user, since_version=0)
        body = {"id": attempt.id, "ranked": attempt.ranked, "game": game}
        return Response(body, status=201, headers={"ETag": f'"{game["version"]}"'})


class DailyLeaderboardEntrySerializer(serializers.Serializer):
    class DailyLeaderboardPlayerSerializer(serializers.Serializer):
        id = serializers.UUIDField()
        name = serializers.CharField()

    rank = serializers.IntegerField()
    player = DailyLeaderboardPlayerSerializer()
    result = serializers.IntegerField()
    turns = serializers.IntegerField()
    finished_at = serializers.DateTimeField()


class DailyLeaderboardApi(APIView):
    class DailyLeaderboardOutputSerializer(serializers.Serializer):
        date = serializers.DateField()
        count = serializers.IntegerField()
        entries = DailyLeaderboardEntrySerializer(many=True)
        next = serializers.URLField(allow_null=True, help_text="The next page, or null on the last one.")

    @extend_schema(
        operation_id="daily_leaderboard",
        parameters=[
            DAY_PARAMETER,
            OpenApiParameter(
                "cursor",
                str,
                description="From a previous page's `next`; one this API did not give out is 400 "
                "`invalid_cursor`.",
            ),
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": selectors.LEADERBOARD_LIMIT_MAX},
                description=f"Entries per page, 1 to {selectors.LEADERBOARD_LIMIT_MAX}; "
                f"{selectors.LEADERBOARD_LIMIT_DEFAULT} by default.",
            ),
        ],
        responses={200: DailyLeaderboardOutputSerializer, **problem_responses(400, 404)},
    )
    def get(self, request: Request, day: str) -> Response:
        limit = selectors.leaderboard_limit(request.query_params.get("limit"))
        deal = services.daily_deal_get_started(day=_parse_day(day))
        page: dict[str, Any] = selectors.leaderboard_page(
            deal=deal, cursor=request.query_params.get("cursor"), limit=limit
        )
        next_cursor = page.pop("next_cursor")
        page["next"] = None
        if next_cursor is not None:
            query = request.query_params.copy()
            query["cursor"] = next_cursor
            query["limit"] = str(limit)
            page["next"] = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
        return Response(self.DailyLeaderboardOutputSerializer(page).data)


class DailyLeaderboardMeApi(APIView):
    permission_classes = [IsAuthenticated]

    class DailyLeaderboardMeOutputSerializer(serializers.Serializer):
        rank = serializers.IntegerField()
        result = serializers.IntegerField()
        percentile = serializers.FloatField(
            help_text="The percentage of the day's ranked results at or below yours, yours included."
        )
        count = serializers.IntegerField()

    @extend_schema(
        operation_id="daily_leaderboard_me",
        parameters=[DAY_PARAMETER],
        responses={
            200: DailyLeaderboardMeOutputSerializer,
            **problem_responses(
                400,
                404,
                descriptions={
                    404: "`no_daily_deal` for a day not started or before the first deal; `no_ranked_result` "
                    "when you have no ranked result that day (no ranked attempt, or one still in play)."
                },
            ),
        },
    )
    def get(self, request: Request, day: str) -> Response:
        deal = services.daily_deal_get_started(day=_parse_day(day))
        standing = selectors.leaderboard_me(deal=deal, player=request.user)
        return Response(self.DailyLeaderboardMeOutputSerializer(standing).data)


class PlayerDailyHistoryApi(APIView):
    permission_classes = [IsAuthenticated]

    class PlayerDailyHistoryOutputSerializer(serializers.Serializer):
        class PlayerDailyDaySerializer(serializers.Serializer):
            date = serializers.DateField()
            number = serializers.IntegerField()
            result = serializers.IntegerField()
            rank = serializers.IntegerField()
            count = serializers.IntegerField()

        history = PlayerDailyDaySerializer(many=True, help_text="Ranked results, newest first.")
        current_streak = serializers.IntegerField(
            help_text="Consecutive UTC days with a ranked finish, up to today or yesterday."
        )
        best_streak = serializers.IntegerField()
        mean_result = serializers.FloatField(allow_null=True)
        share_text = serializers.CharField(
            allow_null=True,
            help_text='The latest result, without its cards: "Kings Corner Daily #333: +14 · rank 3 of 120".',
        )

    @extend_schema(
        operation_id="player_daily_history",
        responses={200: PlayerDailyHistoryOutputSerializer, **problem_responses()},
    )
    def get(self, request: Request) -> Response:
        services.daily_deals_close_due()
        history = selectors.player_daily_history(player=request.user)
        return Response(self.PlayerDailyHistoryOutputSerializer(history).data)
