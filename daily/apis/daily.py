"""The daily deal's API views: the deal of a day, attempts at it, its leaderboard, a player's history. Each
renders what it answers through the output serializer that also generates its schema."""

import re
from datetime import date
from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from daily import clock, services
from daily.errors import InvalidDate
from daily.models import DailyPar
from daily.selectors.commitments import anchor_view, commitments_list, commitments_range
from daily.selectors.deals import daily_deal_view, daily_deal_view_of_day
from daily.selectors.leaderboard import (
    LEADERBOARD_LIMIT_DEFAULT,
    LEADERBOARD_LIMIT_MAX,
    LEADERBOARD_STATUSES,
    leaderboard_limit,
    leaderboard_me,
    leaderboard_page,
)
from daily.selectors.par import (
    daily_par_replay,
    leaderboard_me_par,
    leaderboard_page_par,
    player_daily_history_par,
)
from games.apis.auth import request_player, request_player_or_none
from games.apis.responses import CREATED_ETAG_HEADER, etag, location_header
from games.apis.serializers import GameViewSerializer, MoveField, RulesOutputSerializer, TableSerializer
from games.selectors import game_view
from kingscorner.api.examples import EXAMPLES
from kingscorner.api.fields import no_body
from kingscorner.api.openapi import EMPTY_BODY, Refusals
from kingscorner.api.output import compiled

CLOSED_HELP = (
    "Closed as it stood at the finishing deadline, unfinished; it ranks after the finished results "
    "equal to it."
)

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


def _response_example(name: str, key: str, status: int = 200) -> OpenApiExample:
    return OpenApiExample(name, value=EXAMPLES[key], response_only=True, status_codes=[str(status)])


class DailyOpponentSerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField()
    name = serializers.CharField()
    level = serializers.CharField()


class DailyAttemptSummarySerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField(help_text="The attempt's id.")
    game_id = serializers.UUIDField()
    ranked = serializers.BooleanField()
    started_at = serializers.DateTimeField()


class DailyStandingSerializer(serializers.Serializer[Any]):
    rank = serializers.IntegerField()
    result = serializers.IntegerField()
    turns = serializers.IntegerField()
    finished_at = serializers.DateTimeField()
    closed = serializers.BooleanField(help_text=CLOSED_HELP)
    percentile = serializers.FloatField(
        help_text="The percentage of the day's ranked results at or below this one, this one included."
    )
    count = serializers.IntegerField(help_text="The number of ranked results of the day.")


PAR_HELP = (
    "Null until the day's par is published: once the seed is revealed, within minutes after. Par is at least "
    "the best ranked result of the day."
)


class DailyParSerializer(serializers.Serializer[Any]):
    """The day's par: the best result known on its deal, and how it was found."""

    result = serializers.IntegerField(help_text="The daily result of the par line.")
    turns = serializers.IntegerField(help_text="The turns the player takes along it.")
    finished = serializers.BooleanField(
        help_text="Whether the line plays the hand to its end (else it stops with the hand as it stands)."
    )
    method = serializers.ChoiceField(
        choices=DailyPar.Method.values,
        help_text="How par was found: `beam`, the par search over the player's turns with every card known; "
        "`normal` or `sharp`, the line of that computer player in seat 0, which the search did not beat; "
        "`player`, a ranked player's line that beat the search.",
    )
    node_budget = serializers.IntegerField(help_text="The search's budget of nodes.")
    nodes = serializers.IntegerField(help_text="The nodes the search spent.")
    computed_at = serializers.DateTimeField()


class DailyDealOutputSerializer(serializers.Serializer[Any]):
    """A day's deal: the same cards for everyone, and a commitment to its seed."""

    date = serializers.DateField()
    number = serializers.IntegerField(help_text="The deal's number, #1 on the first day.")
    rules = RulesOutputSerializer()
    opponents = DailyOpponentSerializer(many=True)
    commitment = serializers.CharField(
        help_text="SHA-256 of the seed's 32 bytes (not of its 64 hex characters), in hex; docs/rules.md "
        "(served as GET /api/v1/rules.md) tells how to re-deal the cards from the seed."
    )
    seed = serializers.CharField(
        allow_null=True,
        help_text="Null until `seed_revealed_at`, when the day is over for the leaderboard.",
    )
    seed_revealed_at = serializers.DateTimeField(
        help_text="When the seed is revealed and the day's ranked attempts close: the next UTC midnight "
        "plus the finishing grace period. A ranked attempt still unfinished then is recorded as it stands."
    )
    next_deal_in = serializers.IntegerField(help_text="Seconds until the next deal starts.")
    par = DailyParSerializer(allow_null=True, help_text=PAR_HELP)


class DailyDealForPlayerOutputSerializer(DailyDealOutputSerializer):
    """A day's deal; with a token, also your attempts at it and your ranked result."""

    attempts = DailyAttemptSummarySerializer(
        many=True, required=False, help_text="Your attempts at the deal; only with a token."
    )
    result = DailyStandingSerializer(
        allow_null=True, required=False, help_text="Your ranked result, or null; only with a token."
    )


def _deal_response(request: Request, day: date) -> Response:
    player = request_player_or_none(request)
    view = None
    if player is not None and clock.started(day):
        view = daily_deal_view_of_day(day=day, player=player)
    if view is None:
        # Refused when the day has not started; made when it is missing.
        deal = services.daily_deal_get_started(day=day)
        view = daily_deal_view(deal=deal, player=player)
    rendering = _DEAL_RENDERING if player is None else _DEAL_FOR_PLAYER_RENDERING
    return Response(rendering(view))


# The deal's renderers, compiled once (kingscorner.api.output), as the game view's.
_DEAL_RENDERING = compiled(DailyDealOutputSerializer())
_DEAL_FOR_PLAYER_RENDERING = compiled(DailyDealForPlayerOutputSerializer())


DEAL_DESCRIPTION = (
    "Everyone plays the same cards against the same computer players. `commitment` is the SHA-256 of the "
    "seed, published before anyone plays; `seed` is null until `seed_revealed_at`, when the day is over "
    "for the leaderboard, and then re-deals the cards as docs/rules.md says. A token is optional: with "
    "one, your `attempts` and ranked `result` are added; one that is sent must be valid."
)


class DailyTodayApi(APIView):
    refusals = Refusals("daily_today", "no_daily_deal", token="optional")

    @extend_schema(
        operation_id="daily_today",
        summary="Today's deal",
        tags=["daily"],
        parameters=refusals.headers(),
        responses={200: DailyDealForPlayerOutputSerializer, **refusals.responses()},
        examples=[_response_example("Today, with a token", "daily_today_response"), *refusals.examples()],
        description=f"The deal of the current UTC day. {DEAL_DESCRIPTION}",
    )
    def get(self, request: Request) -> Response:
        return _deal_response(request, clock.today())


class DailyDayApi(APIView):
    refusals = Refusals("daily_day", "invalid_date", "not_found", "no_daily_deal", token="optional")

    @extend_schema(
        operation_id="daily_day",
        summary="A day's deal",
        tags=["daily"],
        parameters=[DAY_PARAMETER, *refusals.headers()],
        responses={200: DailyDealForPlayerOutputSerializer, **refusals.responses()},
        examples=[_response_example("A day, without a token", "daily_day_response"), *refusals.examples()],
        description=f"The deal of any day that has started, today's or an earlier one. {DEAL_DESCRIPTION}",
    )
    def get(self, request: Request, day: str) -> Response:
        return _deal_response(request, _parse_day(day))


class DailyAttemptCreateApi(APIView):
    permission_classes = [IsAuthenticated]

    class DailyAttemptOutputSerializer(serializers.Serializer[Any]):
        """Your attempt at a daily deal, and its game."""

        id = serializers.UUIDField(help_text="The attempt's id.")
        ranked = serializers.BooleanField(help_text="Whether it counts for the leaderboard.")
        game = GameViewSerializer(help_text="The game as your seat sees it; play it through POST moves.")

    refusals = Refusals(
        "daily_attempt_create",
        "invalid_date",
        "not_found",
        "no_daily_deal",
        "ranked_attempt_open",
        token="required",
        body="empty",
    )

    @extend_schema(
        operation_id="daily_attempt_create",
        summary="Start an attempt",
        tags=["daily"],
        parameters=[
            DAY_PARAMETER,
            CREATED_ETAG_HEADER,
            location_header("the attempt's game"),
            *refusals.headers(),
        ],
        request=EMPTY_BODY,
        responses={201: DailyAttemptOutputSerializer, **refusals.responses()},
        examples=[
            _response_example("A ranked attempt", "daily_attempt_create_response", 201),
            *refusals.examples(),
        ],
        description=(
            "Starts a game on the deal of the day. It takes no body, or `{}`: any other body is refused "
            "(400 `invalid_request`, 415 `unsupported_media_type` for one that is not JSON) and starts "
            "nothing. Your first attempt at today's deal is ranked; "
            "later ones, and any at an earlier day's deal, are unranked practice. Play it through "
            "POST games/{id}/moves: when the ranked hand ends, the server records your result. A ranked "
            "attempt still unfinished at the day's finishing deadline is recorded as it stands. While your "
            "ranked attempt at a deal is unfinished, no other attempt at it starts (409 "
            "`ranked_attempt_open`): practice at the same deal would show the ranked game's future draws. "
            "Hints are refused in every game at the deal while your ranked attempt at it is unfinished."
        ),
    )
    def post(self, request: Request, day: str) -> Response:
        no_body(request)
        attempt = services.attempt_start(player=request_player(request), day=_parse_day(day))
        # The events POST /games gives a new game: the deal and what happened before the player's turn.
        # A daily game has one person, in seat 0.
        game = game_view(game=attempt.game, seat=0, since_version=0)
        body = {"id": attempt.public_id, "ranked": attempt.ranked, "game": game}
        location = request.build_absolute_uri(reverse("game-detail", args=[attempt.game_id]))
        return Response(
            self.DailyAttemptOutputSerializer(body).data,
            status=201,
            headers={"ETag": etag(game["version"]), "Location": location},
        )


class DailyLeaderboardEntrySerializer(serializers.Serializer[Any]):
    class DailyLeaderboardPlayerSerializer(serializers.Serializer[Any]):
        id = serializers.UUIDField()
        name = serializers.CharField(help_text="The name as the player registered it; names may repeat.")
        discriminator = serializers.CharField(
            help_text="Four digits that tell this player apart from others whose names look alike."
        )
        display_name = serializers.CharField(help_text="The name as the board shows it: `Ada#4821`.")

    rank = serializers.IntegerField()
    player = DailyLeaderboardPlayerSerializer()
    result = serializers.IntegerField()
    turns = serializers.IntegerField()
    finished_at = serializers.DateTimeField()
    closed = serializers.BooleanField(help_text=CLOSED_HELP)
    vs_par = serializers.IntegerField(allow_null=True, help_text=f"The result minus par. {PAR_HELP}")


class DailyLeaderboardApi(APIView):
    class DailyLeaderboardOutputSerializer(serializers.Serializer[Any]):
        """A page of a day's leaderboard."""

        date = serializers.DateField()
        status = serializers.ChoiceField(
            choices=LEADERBOARD_STATUSES,
            help_text="`open` while ranked attempts may still finish; `closing` from the finishing deadline "
            "until every ranked attempt left unfinished has been recorded as closed (they are not on the "
            "board yet); then `final`.",
        )
        count = serializers.IntegerField()
        par = serializers.IntegerField(allow_null=True, help_text=f"The day's par result. {PAR_HELP}")
        par_reached = serializers.IntegerField(
            allow_null=True, help_text="How many ranked results reached par; null until par is published."
        )
        items = DailyLeaderboardEntrySerializer(many=True, source="entries")
        next = serializers.URLField(allow_null=True, help_text="The next page, or null on the last one.")

    refusals = Refusals(
        "daily_leaderboard",
        "invalid_date",
        "not_found",
        "no_daily_deal",
        "invalid_cursor",
        "invalid_limit",
        token="optional",
    )

    @extend_schema(
        operation_id="daily_leaderboard",
        summary="A day's leaderboard",
        tags=["daily"],
        examples=[_response_example("The first page", "daily_leaderboard_response"), *refusals.examples()],
        description="The day's ranked results: higher results first; equal results share a rank and are "
        "ordered by fewer turns, then earlier finishes. Follow `next` until it is null. A token is "
        "optional; one that is sent must be valid.",
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
                {"type": "integer", "minimum": 1, "maximum": LEADERBOARD_LIMIT_MAX},
                description=f"Entries per page, 1 to {LEADERBOARD_LIMIT_MAX}; "
                f"{LEADERBOARD_LIMIT_DEFAULT} by default.",
            ),
            *refusals.headers(),
        ],
        responses={200: DailyLeaderboardOutputSerializer, **refusals.responses()},
    )
    def get(self, request: Request, day: str) -> Response:
        limit = leaderboard_limit(request.query_params.get("limit"))
        deal = services.daily_deal_get_started(day=_parse_day(day))
        page = leaderboard_page_par(
            deal=deal,
            page=leaderboard_page(deal=deal, cursor=request.query_params.get("cursor"), limit=limit),
        )
        # The page links its successor by URL, the cursor in its query.
        next_url = None
        if page["next_cursor"] is not None:
            query = request.query_params.copy()
            query["cursor"] = page["next_cursor"]
            query["limit"] = str(limit)
            next_url = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
        return Response(_LEADERBOARD_RENDERING({**page, "next": next_url}))


_LEADERBOARD_RENDERING = compiled(DailyLeaderboardApi.DailyLeaderboardOutputSerializer())


class DailyLeaderboardMeApi(APIView):
    permission_classes = [IsAuthenticated]

    class DailyLeaderboardMeOutputSerializer(serializers.Serializer[Any]):
        """Your place on a day's leaderboard."""

        rank = serializers.IntegerField()
        result = serializers.IntegerField()
        closed = serializers.BooleanField(help_text=CLOSED_HELP)
        percentile = serializers.FloatField(
            help_text="The percentage of the day's ranked results at or below yours, yours included."
        )
        count = serializers.IntegerField()
        par = serializers.IntegerField(allow_null=True, help_text=f"The day's par result. {PAR_HELP}")
        vs_par = serializers.IntegerField(
            allow_null=True, help_text="Your result minus par; null until par is published."
        )
        par_reached = serializers.IntegerField(
            allow_null=True, help_text="How many ranked results reached par; null until par is published."
        )

    refusals = Refusals(
        "daily_leaderboard_me",
        "invalid_date",
        "not_found",
        "no_daily_deal",
        "no_ranked_result",
        token="required",
    )

    @extend_schema(
        operation_id="daily_leaderboard_me",
        summary="Your place on a day's leaderboard",
        tags=["daily"],
        parameters=[DAY_PARAMETER, *refusals.headers()],
        responses={200: DailyLeaderboardMeOutputSerializer, **refusals.responses()},
        examples=[_response_example("Your place", "daily_leaderboard_me_response"), *refusals.examples()],
        description="Your rank, result and percentile on the day's leaderboard, once your ranked attempt "
        "is finished (until then 404 `no_ranked_result`).",
    )
    def get(self, request: Request, day: str) -> Response:
        deal = services.daily_deal_get_started(day=_parse_day(day))
        standing = leaderboard_me_par(
            deal=deal, standing=leaderboard_me(deal=deal, player=request_player(request))
        )
        return Response(self.DailyLeaderboardMeOutputSerializer(standing).data)


class PlayerDailyHistoryApi(APIView):
    permission_classes = [IsAuthenticated]

    class PlayerDailyHistoryOutputSerializer(serializers.Serializer[Any]):
        """Your daily results and streaks."""

        class PlayerDailyDaySerializer(serializers.Serializer[Any]):
            date = serializers.DateField()
            number = serializers.IntegerField()
            result = serializers.IntegerField()
            rank = serializers.IntegerField()
            count = serializers.IntegerField()
            closed = serializers.BooleanField(help_text=CLOSED_HELP)
            par = serializers.IntegerField(allow_null=True, help_text=f"The day's par result. {PAR_HELP}")
            vs_par = serializers.IntegerField(
                allow_null=True, help_text="Your result minus par; null until par is published."
            )

        history = PlayerDailyDaySerializer(many=True, help_text="Ranked results, newest first.")
        current_streak = serializers.IntegerField(
            help_text="Consecutive UTC days with a ranked finish, up to today or yesterday."
        )
        best_streak = serializers.IntegerField()
        mean_result = serializers.FloatField(allow_null=True)
        share_text = serializers.CharField(
            allow_null=True,
            help_text="The latest result, without its cards, with the day's par once published: "
            '"Kings Corner Daily #333: +14 · par +21 · rank 3 of 120".',
        )

    refusals = Refusals("player_daily_history", token="required")

    @extend_schema(
        operation_id="player_daily_history",
        summary="Your daily history",
        tags=["daily"],
        parameters=refusals.headers(),
        responses={200: PlayerDailyHistoryOutputSerializer, **refusals.responses()},
        examples=[_response_example("A history", "player_daily_history_response"), *refusals.examples()],
        description="Your ranked daily results, newest first, each with its rank now; your current and best "
        "streaks of consecutive days, your mean result, and a spoiler-free line to share.",
    )
    def get(self, request: Request) -> Response:
        history = player_daily_history_par(player=request_player(request))
        return Response(self.PlayerDailyHistoryOutputSerializer(history).data)


class DailyParViewSerializer(serializers.Serializer[Any]):
    """The table as the player saw it: their own hand, every hand's size, the piles and the stock's size."""

    current_seat = serializers.IntegerField(allow_null=True, help_text="Null once the hand is over.")
    hand = serializers.ListField(child=serializers.CharField(), help_text="Your hand (seat 0) then.")
    hand_counts = serializers.ListField(child=serializers.IntegerField(), help_text="Cards in each hand.")
    table = TableSerializer()


class DailyParStepSerializer(serializers.Serializer[Any]):
    """One move of the hand along the par line, and the table as the player saw it right after it."""

    seat = serializers.IntegerField(help_text="Who moved: 0 is the player, 1 to 3 the computer players.")
    move = MoveField()
    current_seat = serializers.IntegerField(allow_null=True, help_text="Null once the hand is over.")
    hand = serializers.ListField(child=serializers.CharField(), help_text="Your hand (seat 0) then.")
    hand_counts = serializers.ListField(child=serializers.IntegerField(), help_text="Cards in each hand.")
    table = TableSerializer()


class DailyParApi(APIView):
    class DailyParReplayOutputSerializer(serializers.Serializer[Any]):
        """A day's par line as a replay a client can step through, like a game."""

        date = serializers.DateField()
        number = serializers.IntegerField()
        seed = serializers.CharField(help_text="The revealed seed (par is published only after the reveal).")
        rules = RulesOutputSerializer()
        opponents = DailyOpponentSerializer(many=True)
        par = DailyParSerializer()
        start = DailyParViewSerializer(help_text="The table as dealt, before any move.")
        steps = DailyParStepSerializer(
            many=True,
            help_text="Every move of the hand in order, the computer players' included, each with the table "
            "as the player saw it right after: their own cards only, never another hand's or the stock's.",
        )

    refusals = Refusals(
        "daily_par", "invalid_date", "not_found", "no_daily_deal", "par_not_ready", token="optional"
    )

    @extend_schema(
        operation_id="daily_par",
        summary="A day's par line, as a replay",
        tags=["daily"],
        parameters=[DAY_PARAMETER, *refusals.headers()],
        responses={200: DailyParReplayOutputSerializer, **refusals.responses()},
        examples=[
            _response_example("A day's par (its replay cut to its first steps)", "daily_par_response"),
            *refusals.examples(),
        ],
        description="The best line known on the day's deal, once its seed is revealed and par computed "
        "(until then 404 `par_not_ready`): the moves of the hand, the computer players' included, each "
        "with the table as the player (seat 0) saw it right after, so that a client can step through it "
        "like a game. A token is optional; one that is sent must be valid.",
    )
    def get(self, request: Request, day: str) -> Response:
        deal = services.daily_deal_get_started(day=_parse_day(day))
        return Response(self.DailyParReplayOutputSerializer(daily_par_replay(deal=deal)).data)


# --- What commits the server to its seeds in advance: a season's anchor and the days' commitments ----------

DATE_QUERY_HELP = "YYYY-MM-DD; a malformed or impossible date is 400 `invalid_date`."


def _query_day(request: Request, name: str) -> date | None:
    text = request.query_params.get(name)
    return None if text is None else _parse_day(text)


class DailyAnchorApi(APIView):
    authentication_classes = ()

    class DailyAnchorOutputSerializer(serializers.Serializer[Any]):
        """A season's anchor: the SHA-256 of its first day's seed, which each later seed hashes forward
        to."""

        season_start = serializers.DateField(help_text="The season's first day.")
        days = serializers.IntegerField(help_text="The number of days in the season.")
        anchor = serializers.CharField(
            help_text="SHA-256 of the first day's 32-byte seed, in hex. The seed of the season's day i (0 "
            'for its first), hashed i times as SHA-256("kingscorner-chain:" ‖ seed) and then once as '
            "SHA-256(seed), gives it: docs/rules.md."
        )

    refusals = Refusals("daily_anchor", "invalid_date", "no_season", token="none")

    @extend_schema(
        operation_id="daily_anchor",
        summary="A season's anchor",
        tags=["daily"],
        auth=[],
        parameters=[
            OpenApiParameter(
                "date",
                OpenApiTypes.DATE,
                description=f"A day of the season wanted (any day, a future season's too); today's season by "
                f"default, or the first season while it has not started. {DATE_QUERY_HELP} A day before "
                "the first season is 404 `no_season`.",
            ),
            *refusals.headers(),
        ],
        responses={200: DailyAnchorOutputSerializer, **refusals.responses()},
        examples=[_response_example("This season's anchor", "daily_anchor_response"), *refusals.examples()],
        description="The daily seeds of a season are a reverse hash chain, fixed by the server's secret "
        "before the season starts; its anchor is published before its first day and never changes. Save "
        "it: with it alone, each revealed seed can be checked (examples/verify_daily.py --anchor). No token.",
    )
    def get(self, request: Request) -> Response:
        view = anchor_view(day=_query_day(request, "date"))
        return Response(self.DailyAnchorOutputSerializer(view).data)


class DailyCommitmentsApi(APIView):
    authentication_classes = ()

    class DailyCommitmentsOutputSerializer(serializers.Serializer[Any]):
        """The days' commitments, published in advance."""

        class DailyCommitmentSerializer(serializers.Serializer[Any]):
            date = serializers.DateField()
            commitment = serializers.CharField(help_text="SHA-256 of the day's 32-byte seed, in hex.")
            season_start = serializers.DateField(
                allow_null=True,
                help_text="The first day of the day's season, whose anchor its seed hashes forward to; null "
                "for a day before the first season, checked against its commitment alone.",
            )

        commitments = DailyCommitmentSerializer(
            many=True,
            help_text="One per day from `from` to `to`, oldest first; days before the first deal "
            "are left out.",
        )

    refusals = Refusals(
        "daily_commitments",
        "invalid_date",
        "invalid_date_range",
        "date_too_far_ahead",
        token="none",
        database=True,
    )

    @extend_schema(
        operation_id="daily_commitments",
        summary="The days' commitments, 30 days ahead",
        tags=["daily"],
        auth=[],
        parameters=[
            OpenApiParameter(
                "from", OpenApiTypes.DATE, description=f"The first day; today by default. {DATE_QUERY_HELP}"
            ),
            OpenApiParameter(
                "to",
                OpenApiTypes.DATE,
                description=f"The last day; 30 days after `from` by default, but no later than today + 30. "
                f"{DATE_QUERY_HELP} A day after today + 30 (in `from` or `to`) is 400 "
                "`date_too_far_ahead`; `from` after `to`, or more than 366 days, is 400 "
                "`invalid_date_range`.",
            ),
            *refusals.headers(),
        ],
        responses={200: DailyCommitmentsOutputSerializer, **refusals.responses()},
        examples=[_response_example("Three days", "daily_commitments_response"), *refusals.examples()],
        description="The commitment of every day from `from` to `to`: past days, today and up to 30 days "
        "ahead. The seed chain fixes them long before, so publishing them early costs nothing; save them "
        "(examples/verify_daily.py --commitments) and a server that changed a day's seed later is caught. "
        "No token.",
    )
    def get(self, request: Request) -> Response:
        start, end = commitments_range(start=_query_day(request, "from"), end=_query_day(request, "to"))
        listed = commitments_list(start=start, end=end)
        return Response(self.DailyCommitmentsOutputSerializer(listed).data)
