"""The games API's games: starting one, listing yours, reading one and its event log."""

import base64
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlencode

from django.urls import reverse
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
)
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response

from games import selectors, services
from games.apis.auth import request_bearer, request_player
from games.apis.responses import (
    CREATED_ETAG_HEADER,
    ETAG_HEADER,
    RULES_CODES,
    PlayerApi,
    game_response,
    location_header,
    request_example,
    response_example,
)
from games.apis.serializers import (
    LEVEL_CHOICES,
    GamePlayerSerializer,
    GameViewSerializer,
    RulesField,
    RulesOutputSerializer,
    event_list,
)
from games.engine import make_rules
from games.engine.players import NAMES
from games.errors import InvalidCursor, InvalidStatus, page_limit
from games.models import ABANDON_SECONDS_DEFAULT, Game
from games.services.players import token_checked_on_refusal
from kingscorner.api.fields import QueryIntegerField, StrictInputSerializer, StrictIntegerField
from kingscorner.api.openapi import Refusals


class GamePagination(CursorPagination):
    ordering = ("-created_at", "-id")
    page_size = 20
    page_size_query_param = "limit"
    max_page_size = 100

    def get_page_size(self, request: Request) -> int:
        # DRF falls back to the default on a limit it cannot read and caps one too large; a limit the
        # schema does not allow is refused instead, as every list's is.
        value = request.query_params.get(self.page_size_query_param)
        return page_limit(value, default=self.page_size, maximum=self.max_page_size)

    def decode_cursor(self, request: Request) -> Any:
        # DRF reads an empty cursor as none (the first page); it is not one this API gave out, as the
        # leaderboard's empty cursor is not. Nor is any cursor DRF would read without having made it.
        encoded = request.query_params.get(self.cursor_query_param)
        if encoded is not None and not self._given_out(encoded):
            raise InvalidCursor("Not a cursor this API gave out: use `next`.")
        try:
            cursor = super().decode_cursor(request)
            if cursor is None or cursor.position is None:
                return cursor
            # The position is read as a time by the query: the cursors given out name one in UTC (a game's
            # created_at), so a cursor that names no time, or one at another offset (which PostgreSQL may
            # not even take: ±16:00 and beyond), is not ours.
            position = parse_datetime(str(cursor.position))
            if position is None or position.utcoffset() != timedelta(0):
                raise NotFound
        except (NotFound, ValueError):
            raise InvalidCursor("Not a cursor this API gave out: use `next`.") from None
        return cursor

    def _given_out(self, encoded: str) -> bool:
        """Whether `encoded` has the form of the cursors DRF encodes (encode_cursor): base64 of a query string
        holding a position `p`, once, and at most once an offset `o` from 1 to the cutoff DRF reads and the
        reverse flag `r=1`, and nothing else. DRF's own reading passes over unknown members, repeats, a
        missing position and an offset past its cutoff (the first page, or a capped one)."""
        try:
            text = base64.b64decode(encoded.encode("ascii"), validate=True).decode("ascii")
            tokens = parse_qs(text, keep_blank_values=True, strict_parsing=True)
        except ValueError:
            return False
        if "p" not in tokens or not tokens.keys() <= {"o", "r", "p"}:
            return False
        if any(len(values) != 1 for values in tokens.values()) or tokens.get("r", ["1"]) != ["1"]:
            return False
        offset = tokens.get("o", ["1"])[0]
        return offset.isascii() and offset.isdigit() and 1 <= int(offset) <= self.offset_cutoff


class SeatInputSerializer(StrictInputSerializer):
    """A seat of a new table: a person, or a computer player at a level (normal when left out)."""

    kind = serializers.ChoiceField(choices=["person", "computer"])
    level = serializers.ChoiceField(
        choices=LEVEL_CHOICES, required=False, help_text="A computer's level; a person has none."
    )

    schema_constraints = {
        "oneOf": [
            {"properties": {"kind": {"enum": ["person"]}}, "not": {"required": ["level"]}},
            {"properties": {"kind": {"enum": ["computer"]}}},
        ]
    }

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data["kind"] == "person" and "level" in data:
            raise serializers.ValidationError({"level": ["A person has no level."]})
        if data["kind"] == "computer":
            data.setdefault("level", "normal")
        return data


class GameCollectionApi(PlayerApi):
    class GameCreateInputSerializer(StrictInputSerializer):
        """The options of a new game; all may be left out. Either opponents and levels (you against computer
        players) or `seats` (a table for several people)."""

        opponents = StrictIntegerField(
            min_value=1,
            max_value=len(NAMES),
            required=False,
            help_text="How many computer players (default 3).",
        )
        level = serializers.ChoiceField(
            choices=LEVEL_CHOICES,
            required=False,
            help_text="Every opponent's level (default normal). Give level or levels, not both.",
        )
        levels = serializers.ListField(
            child=serializers.ChoiceField(choices=LEVEL_CHOICES),
            min_length=1,
            max_length=len(NAMES),
            required=False,
            help_text="One level per opponent, seats 1.. in order (Millie, Roy, Bess); with `opponents`, "
            "as many levels as opponents.",
        )
        seats = serializers.ListField(
            child=SeatInputSerializer(),
            min_length=2,
            max_length=len(NAMES) + 1,
            required=False,
            help_text="A table's 2 to 4 seats in order, instead of opponents and levels: the first is you, a "
            "person. With another person the game waits (`waiting`) for them behind the invitation link in "
            "the response, until their seats are taken or you start it.",
        )
        turn_seconds = StrictIntegerField(
            min_value=services.TURN_SECONDS_MIN,
            max_value=services.TURN_SECONDS_MAX,
            required=False,
            allow_null=True,
            default=None,
            help_text=f"A turn clock: seconds a person has for a turn, {services.TURN_SECONDS_MIN} to "
            f"{services.TURN_SECONDS_MAX}; past it a computer at normal plays the turn. Null: no clock.",
        )
        abandon_seconds = StrictIntegerField(
            min_value=services.ABANDON_SECONDS_MIN,
            max_value=services.ABANDON_SECONDS_MAX,
            required=False,
            help_text="Without a clock: seconds a person may take from the start of their turn before "
            f"another may replace them, {services.ABANDON_SECONDS_MIN} to {services.ABANDON_SECONDS_MAX} "
            f"(default {ABANDON_SECONDS_DEFAULT}); not with `turn_seconds`.",
        )
        fill_level = serializers.ChoiceField(
            choices=LEVEL_CHOICES,
            default="normal",
            help_text="The level of the computers that take the seats still free when you start a waiting "
            "table.",
        )
        rules = RulesField(required=False)
        target_score = StrictIntegerField(
            min_value=1,
            max_value=services.TARGET_SCORE_MAX,
            allow_null=True,
            default=25,
            help_text=f"Hands are played until a total reaches it, 1 to {services.TARGET_SCORE_MAX}; "
            "null for a single hand.",
        )
        seed = serializers.RegexField(
            r"^[0-9a-fA-F]{64}$",
            required=False,
            help_text="64 hex characters for a reproducible deal; not at a table with another person (a "
            "deal is a public function of its seed, so whoever chose it would know every hand).",
        )

        schema_constraints = {
            "allOf": [
                {"not": {"required": ["level", "levels"]}},
                # seats instead of opponents and levels.
                *({"not": {"required": ["seats", name]}} for name in ("opponents", "level", "levels")),
            ],
            # A clock or the abandonment rule.
            "not": {
                "required": ["turn_seconds", "abandon_seconds"],
                "properties": {"turn_seconds": {"type": "integer"}},
            },
            # With both opponents and levels, one level per opponent.
            "anyOf": [
                {"not": {"required": ["opponents", "levels"]}},
                *(
                    {
                        "properties": {
                            "opponents": {"minimum": count, "maximum": count},
                            "levels": {"minItems": count, "maxItems": count},
                        }
                    }
                    for count in range(1, len(NAMES) + 1)
                ),
            ],
        }

        def validate(self, data: dict[str, Any]) -> dict[str, Any]:
            if "abandon_seconds" in data and data["turn_seconds"] is not None:
                raise serializers.ValidationError(
                    {
                        "abandon_seconds": [
                            "A table with a turn clock has no abandonment rule: give one of them."
                        ]
                    }
                )
            data.setdefault("abandon_seconds", ABANDON_SECONDS_DEFAULT)
            if "seats" in data:
                mixed = [name for name in ("opponents", "level", "levels") if name in data]
                if mixed:
                    raise serializers.ValidationError({mixed[0]: ["Give seats, or opponents and levels."]})
                if data["seats"][0]["kind"] != "person":
                    raise serializers.ValidationError({"seats": ["The first seat is yours, a person's."]})
                if "seed" in data and any(seat["kind"] == "person" for seat in data["seats"][1:]):
                    # A deal is a public function of its seed: whoever chose it would know every hand.
                    raise serializers.ValidationError(
                        {"seed": ["A table with another person is dealt from a seed nobody chose."]}
                    )
                return data
            if "level" in data and "levels" in data:
                raise serializers.ValidationError({"levels": ["Give level or levels, not both."]})
            if "levels" in data:
                if "opponents" in data and data["opponents"] != len(data["levels"]):
                    raise serializers.ValidationError({"levels": ["Give one level per opponent."]})
            else:
                data["levels"] = [data.get("level", "normal")] * data.get("opponents", len(NAMES))
            data["seats"] = [{"kind": "person"}, *({"kind": "computer", "level": x} for x in data["levels"])]
            return data

    class GameListFilterSerializer(serializers.Serializer[Any]):
        status = serializers.ChoiceField(choices=Game.Status.values, required=False)

    class GameSummarySerializer(serializers.Serializer[Any]):
        """A game in your list: who plays, the scores and whose turn it is, without the cards."""

        id = serializers.UUIDField()
        version = serializers.IntegerField()
        status = serializers.ChoiceField(choices=Game.Status.values)
        closed_reason = serializers.CharField(allow_null=True, help_text="As in the game view.")
        rules = RulesOutputSerializer()
        target_score = serializers.IntegerField(allow_null=True)
        hand_number = serializers.IntegerField(help_text="0 while the table waits.")
        your_seat = serializers.IntegerField()
        is_your_turn = serializers.BooleanField()
        players = GamePlayerSerializer(many=True)
        winners = serializers.ListField(child=serializers.IntegerField(), allow_null=True)
        created_at = serializers.DateTimeField()
        updated_at = serializers.DateTimeField()

    class GameListOutputSerializer(serializers.Serializer[Any]):
        """A page of your games, newest first."""

        def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
            fields = super().get_fields()
            fields["items"] = GameCollectionApi.GameSummarySerializer(many=True)
            fields["next"] = serializers.URLField(
                allow_null=True, help_text="The next (older) page, or null on the last one."
            )
            return fields

    list_refusals = Refusals(
        "games_list", "invalid_status", "invalid_limit", "invalid_cursor", token="required"
    )
    create_refusals = Refusals("games_create", *RULES_CODES, token="required", body="json")

    @extend_schema(
        operation_id="games_list",
        summary="List your games",
        tags=["games"],
        parameters=[
            GameListFilterSerializer,
            OpenApiParameter(
                "cursor", str, description="From `next` or `previous`; any other is a 400 `invalid_cursor`."
            ),
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": GamePagination.max_page_size},
                description=f"Games a page, 1 to {GamePagination.max_page_size} "
                f"(default {GamePagination.page_size}).",
            ),
            *list_refusals.headers(),
        ],
        responses={200: GameListOutputSerializer, **list_refusals.responses()},
        examples=[response_example("A page of one game", "games_list_response"), *list_refusals.examples()],
        description="The games you hold a seat at, newest first, a page at a time: follow `next` until it is "
        "null. `status` keeps the games that are `waiting` (for their people), `playing`, `hand_over` "
        "(between two hands) or `finished`.",
    )
    def get(self, request: Request) -> Response:
        # A plain dict, not the QueryDict: DRF skips an empty optional field of form data (`?status=`)
        # rather than refusing it.
        filters = self.GameListFilterSerializer(data=request.query_params.dict())
        if not filters.is_valid():
            raise InvalidStatus(f"status is one of {', '.join(Game.Status.values)}.")
        paginator = GamePagination()
        games = paginator.paginate_queryset(
            selectors.game_list(player=request_player(request), status=filters.validated_data.get("status")),
            request,
            self,
        )
        page = {
            "items": [
                selectors.game_summary(game=game, player=request_player(request)) for game in games or []
            ],
            "next": paginator.get_next_link(),
        }
        return Response(self.GameListOutputSerializer(page).data)

    @extend_schema(
        operation_id="games_create",
        summary="Start a game",
        tags=["games"],
        request=GameCreateInputSerializer,
        responses={201: GameViewSerializer, **create_refusals.responses()},
        parameters=[CREATED_ETAG_HEADER, location_header("the new game"), *create_refusals.headers()],
        examples=[
            OpenApiExample("Defaults: three normal opponents, classic, to 25", value={}, request_only=True),
            request_example("Three normal opponents, classic rules, from a seed", "games_create_request"),
            response_example("The new game, your turn", "games_create_response", 201),
            request_example(
                "A table for two people and a sharp computer, on a clock", "games_create_table_request"
            ),
            response_example("The table, waiting for its second person", "games_create_table_response", 201),
            *create_refusals.examples(),
        ],
        description="Starts a game with you in seat 0 and the computer players after you. The first hand "
        "is dealt; `events` are the deal and any turns before yours, and on your turn the turn's draw is "
        "already in your hand. The same `seed` deals the same cards.\n\n"
        "With `seats`, a table for 2 to 4 people and computers: with another person in it the game is "
        "`waiting`, nothing dealt, and `invitation` holds the link to send (`url`, a page where a person "
        "sees the table and joins) and the endpoint that seats whoever POSTs it (`join`). The game starts "
        "when the last person's seat is taken, or when you start it (POST start): computers at "
        "`fill_level` then take the seats still free.",
    )
    def post(self, request: Request) -> Response:
        data = self.GameCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        seed = values.get("seed")
        game = services.table_create(
            player=request_player(request),
            seats=[services.SeatSpec(seat["kind"], seat.get("level")) for seat in values["seats"]],
            rules=make_rules(values.get("rules")),
            target_score=values["target_score"],
            seed=bytes.fromhex(seed) if seed else None,
            turn_seconds=values["turn_seconds"],
            abandon_seconds=values["abandon_seconds"],
            fill_level=values["fill_level"],
        )
        view = selectors.game_view(game=game, seat=0, since_version=0)
        location = request.build_absolute_uri(reverse("game-detail", args=[game.id]))
        return game_response(view, status=201, headers={"Location": location}, request=request)


class GameDetailApi(PlayerApi):
    # The token is looked up with the game, in one read (selectors.game_read).
    looks_up_token_with_game = True

    class GameDetailQuerySerializer(serializers.Serializer[Any]):
        since_version = QueryIntegerField(
            min_value=0,
            required=False,
            help_text=f"Include the events after this version, the first {selectors.EVENTS_PAGE_MAX} of them "
            "(none by default).",
        )

    refusals = Refusals("games_get", "invalid_request", "not_found", "game_not_found", token="required")

    @extend_schema(
        operation_id="games_get",
        summary="Read a game",
        tags=["games"],
        parameters=[GameDetailQuerySerializer, ETAG_HEADER, *refusals.headers()],
        responses={200: GameViewSerializer, **refusals.responses()},
        examples=[response_example("A game on your turn", "games_get_response"), *refusals.examples()],
        description="The game as your seat sees it: your hand, the table, every hand's size, your legal "
        "moves, the seats. Other hands and the stock's order are never shown; a game you hold no seat at "
        "is a 404. `since_version` adds what happened "
        f"after that version, at most {selectors.EVENTS_PAGE_MAX} events: when more happened, "
        "`more_events_after` names the last one shown, and GET events?after=<it> pages through the rest. "
        "The ETag is the version, to send back as If-Match.",
    )
    def get(self, request: Request, game_id: str) -> Response:
        bearer = request_bearer(request)
        with token_checked_on_refusal(bearer.token_hash):
            query = self.GameDetailQuerySerializer(data=request.query_params.dict())
            query.is_valid(raise_exception=True)
        seated = selectors.game_read(game_id=game_id, player=bearer.token_hash)
        since = query.validated_data.get("since_version")
        return game_response(selectors.seated_view(seated, since_version=since), request=request)


# The largest page of the event log a request may ask for (the schema's maximum of `limit`).
EVENTS_LIMIT_MAX = selectors.EVENTS_PAGE_MAX


class GameEventsApi(PlayerApi):
    class GameEventsQuerySerializer(serializers.Serializer[Any]):
        after = QueryIntegerField(min_value=0, default=0, help_text="Events after this seq.")
        # Read by page_limit, as every list's `limit` (400 `invalid_limit`); declared for the schema.
        limit = serializers.IntegerField(
            min_value=1,
            max_value=EVENTS_LIMIT_MAX,
            default=EVENTS_LIMIT_MAX,
            help_text=f"Events a page, 1 to {EVENTS_LIMIT_MAX}; any other is a 400 `invalid_limit`.",
        )

    class GameEventsOutputSerializer(serializers.Serializer[Any]):
        """A page of the game's event log."""

        items = event_list("The events after `after`, in order.")
        next = serializers.URLField(allow_null=True, help_text="The next page, or null on the last one.")
        more_after = serializers.IntegerField(
            help_text="The seq of the last event of this page (`after` if it has none): the next page's "
            "`after`, and a stream's Last-Event-ID to go on live from here."
        )

    refusals = Refusals(
        "games_events", "invalid_request", "invalid_limit", "not_found", "game_not_found", token="required"
    )

    @extend_schema(
        operation_id="games_events",
        summary="Read the event log",
        tags=["games"],
        parameters=[GameEventsQuerySerializer, *refusals.headers()],
        responses={200: GameEventsOutputSerializer, **refusals.responses()},
        examples=[response_example("The first events", "games_events_response"), *refusals.examples()],
        description="Everything that happened in the game, in order, as your seat may see it: your draws "
        "name their card, the others' do not. A page at a time: follow `next` until it is null (or page "
        "yourself with `after`, the last `seq` you have, and `limit`).",
    )
    def get(self, request: Request, game_id: str) -> Response:
        params = request.query_params.dict()
        limit = page_limit(params.pop("limit", None), default=EVENTS_LIMIT_MAX, maximum=EVENTS_LIMIT_MAX)
        query = self.GameEventsQuerySerializer(data=params)
        query.is_valid(raise_exception=True)
        seated = selectors.game_get(game_id=game_id, player=request_player(request))
        page = selectors.game_events(
            game=seated.game, seat=seated.seat, after=query.validated_data["after"], limit=limit
        )
        next_url = None
        if page["has_more"]:
            after = urlencode({"after": page["last"], "limit": limit})
            next_url = request.build_absolute_uri(f"{request.path}?{after}")
        body = {"items": page["events"], "next": next_url, "more_after": page["last"]}
        return Response(self.GameEventsOutputSerializer(body).data)
