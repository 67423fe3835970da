"""The games API: players and tokens, games, moves, hands, the event log, hints and position analysis.
Each view parses its input, calls one service or selector, and renders what it returns through the output
serializer that also generates its schema."""

from typing import Any

from django.urls import reverse
from django.utils.dateparse import parse_datetime
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games import selectors, services
from games.engine import DECK, OPTIONS, PILES, PRESETS, SIDES, make_rules
from games.engine.cards import CARD_PATTERN
from games.engine.players import LEVELS, NAMES
from games.errors import InvalidCursor, InvalidLimit, InvalidStatus, TooManyMoves
from games.models import Game
from games.names import NAME_MAX_LENGTH, NameRefused, name_normalised
from games.openapi_examples import EXAMPLES
from kingscorner.api.fields import ConstantField, StrictCharField, StrictInputSerializer, StrictIntegerField
from kingscorner.api.headers import (
    IDEMPOTENCY_KEY_PARAMETER,
    IF_MATCH_PARAMETER,
    expected_version,
    idempotency_key,
)
from kingscorner.api.openapi import Refusals, response_header

LEVEL_CHOICES = (*LEVELS, "hard")
CARD_HELP = (
    "A card code: rank (A 2-9 T J Q K) then suit (C D H S), e.g. QD; input also takes 10, ♦ and lower case."
)


# --- shared schema pieces -----------------------------------------------------------------------------------


def _card_list(help_text: str = "") -> serializers.ListField:
    return serializers.ListField(child=serializers.CharField(), help_text=help_text)


CARD_INPUT_SCHEMA = {"type": "string", "pattern": CARD_PATTERN, "description": CARD_HELP}
# The deck holds each card once, so a list of cards in a request has at most 52, none twice (a card
# written two ways, QD and qd, is refused too).
CARD_LIST_INPUT_SCHEMA = {
    "type": "array",
    "items": CARD_INPUT_SCHEMA,
    "maxItems": len(DECK),
    "uniqueItems": True,
}


@extend_schema_field(CARD_LIST_INPUT_SCHEMA)
class CardListInputField(serializers.ListField):
    """Card codes in a request, read by the engine (which names what is wrong with them)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=serializers.CharField(), **kwargs)


def _pile_pattern(names: tuple[str, ...]) -> str:
    """A pattern for pile names in either case, as the engine reads them."""
    cased = ("".join(f"[{letter}{letter.lower()}]" for letter in name) for name in names)
    return f"^(?:{'|'.join(cased)})$"


class PileNameField(serializers.ChoiceField):
    """A pile's name: in a response one of its canonical names, in a request either case."""

    def __init__(self, choices: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(choices=choices, **kwargs)


class PileNameFieldExtension(OpenApiSerializerFieldExtension):
    target_class = PileNameField

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        names = tuple(self.target.choices)
        if direction == "request":
            schema: dict[str, Any] = {"type": "string", "pattern": _pile_pattern(names)}
        else:
            schema = {"type": "string", "enum": list(names)}
        if self.target.allow_null and direction == "request":
            schema["nullable"] = True
        return schema


class PilesSerializer(serializers.Serializer):
    """The eight piles, each from its bottom card to its top card."""

    def get_fields(self) -> dict[str, serializers.Field]:
        return {name: _card_list() for name in PILES}


@extend_schema_field(CARD_INPUT_SCHEMA)
class CardInputField(serializers.CharField):
    """A card code as a request may write it."""


# Moves are closed objects (StrictInputSerializer): the engine refuses a member it does not know.
class PlayMoveSerializer(StrictInputSerializer):
    type = ConstantField("play")
    card = CardInputField(help_text=CARD_HELP)
    to = PileNameField(
        choices=PILES,
        required=False,
        allow_null=True,
        help_text="The pile it goes on. Left out (or null) in a request, the card goes where sharp would "
        "put it; in a ranked daily attempt, on the first pile in the order N E S W NE SE SW NW that takes "
        "it. A request may write pile names in either case.",
    )


class MovePileMoveSerializer(StrictInputSerializer):
    type = ConstantField("move_pile")

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["from"] = PileNameField(choices=SIDES, help_text="The side pile that moves.")
        fields["to"] = PileNameField(choices=PILES)
        return fields


class EndTurnMoveSerializer(StrictInputSerializer):
    type = ConstantField("end_turn")


MOVE_SERIALIZERS: dict[str, type[serializers.Serializer]] = {
    "play": PlayMoveSerializer,
    "move_pile": MovePileMoveSerializer,
    "end_turn": EndTurnMoveSerializer,
}
MOVE_SCHEMA = PolymorphicProxySerializer(
    component_name="Move", serializers=MOVE_SERIALIZERS, resource_type_field_name="type"
)


@extend_schema_field(MOVE_SCHEMA)
class MoveField(serializers.JSONField):
    """A move: in a request its JSON as sent, which the engine reads and names what is wrong with; in a
    response rendered by the serializer of its type."""

    def to_representation(self, value: Any) -> Any:
        return _MOVE_RENDERERS[value["type"]].to_representation(value)


def _move_list(help_text: str, **kwargs: Any) -> serializers.ListField:
    return serializers.ListField(child=MoveField(), help_text=help_text, **kwargs)


class MoveRequestListField(serializers.ListField):
    """The moves of a request, 1 to MAX_MOVES of them (so the schema says); more is a 413 `too_many_moves`,
    refused before any of them is read."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=MoveField(), min_length=1, max_length=services.MAX_MOVES, **kwargs)

    def to_internal_value(self, data: Any) -> list[Any]:
        if isinstance(data, list) and len(data) > services.MAX_MOVES:
            raise TooManyMoves(count=len(data), limit=services.MAX_MOVES)
        value: list[Any] = super().to_internal_value(data)
        return value


_RULES_SCHEMA = {
    "oneOf": [
        {"type": "string", "enum": list(PRESETS), "description": "A named rule set."},
        {
            "type": "object",
            "description": "A rule set with single options overridden.",
            "properties": {
                "preset": {"type": "string", "enum": list(PRESETS), "default": "classic"},
                **{
                    name: {"type": "boolean"}
                    if isinstance(values[0], bool)
                    else {"type": "string", "enum": list(values)}
                    for name, values in OPTIONS.items()
                },
            },
            "additionalProperties": False,
            # The one pair of options that cannot go together (incompatible_rules).
            "not": {
                "required": ["draw", "draw_timing"],
                "properties": {"draw": {"enum": ["until_playable"]}, "draw_timing": {"enum": ["end"]}},
            },
        },
    ],
    "description": 'A rule set\'s name (classic, casual, any_space) or {"preset": name, <option>: value}.',
}


@extend_schema_field(_RULES_SCHEMA)
class RulesField(serializers.JSONField):
    """A rule choice as docs/rules.md names it; the engine reads it."""


class RulesOutputSerializer(serializers.Serializer):
    """Every rule option spelled out, and the rule set it started from."""

    layout_king = serializers.ChoiceField(choices=OPTIONS["layout_king"])
    empty_side = serializers.ChoiceField(choices=OPTIONS["empty_side"])
    empty_corner = serializers.ChoiceField(choices=OPTIONS["empty_corner"])
    king_pile_to_corner = serializers.BooleanField()
    draw = serializers.ChoiceField(choices=OPTIONS["draw"])
    draw_timing = serializers.ChoiceField(choices=OPTIONS["draw_timing"])
    blocked_scoring = serializers.ChoiceField(choices=OPTIONS["blocked_scoring"])
    preset = serializers.ChoiceField(choices=list(PRESETS))


# --- events -------------------------------------------------------------------------------------------------


class _EventBase(serializers.Serializer):
    seq = serializers.IntegerField(help_text="The event's place in the game's log, from 1.")
    version = serializers.IntegerField(help_text="The game's version once the event had happened.")


class DealEventSerializer(_EventBase):
    type = ConstantField("deal")
    hand_number = serializers.IntegerField()
    dealer = serializers.IntegerField()
    piles = PilesSerializer()
    stock = serializers.IntegerField(help_text="Cards left in the stock.")


class TurnStartEventSerializer(_EventBase):
    type = ConstantField("turn_start")
    seat = serializers.IntegerField()
    turn = serializers.IntegerField()


class DrawEventSerializer(_EventBase):
    type = ConstantField("draw")
    seat = serializers.IntegerField()
    card = serializers.CharField(required=False, help_text="Only in your own draws.")
    stock = serializers.IntegerField()


class PlayEventSerializer(_EventBase):
    type = ConstantField("play")
    seat = serializers.IntegerField()
    card = serializers.CharField()
    to = serializers.ChoiceField(choices=PILES)


class MovePileEventSerializer(_EventBase):
    type = ConstantField("move_pile")
    seat = serializers.IntegerField()
    to = serializers.ChoiceField(choices=PILES)
    cards = _card_list("The pile that moved, bottom to top.")

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["from"] = serializers.ChoiceField(choices=PILES[:4])
        return fields


class EndTurnEventSerializer(_EventBase):
    type = ConstantField("end_turn")
    seat = serializers.IntegerField()
    turn = serializers.IntegerField()


class HandResultSerializer(serializers.Serializer):
    hand_number = serializers.IntegerField()
    reason = serializers.ChoiceField(choices=["out", "blocked"])
    out_seat = serializers.IntegerField(allow_null=True, help_text="Who went out; null when blocked.")
    hands = serializers.ListField(child=_card_list(), help_text="Every seat's cards left, by seat.")
    penalties = serializers.ListField(child=serializers.IntegerField(), help_text="This hand's, by seat.")
    scores = serializers.ListField(child=serializers.IntegerField(), help_text="Totals after it, by seat.")
    turns_taken = serializers.ListField(child=serializers.IntegerField())


class HandOverEventSerializer(_EventBase, HandResultSerializer):
    type = ConstantField("hand_over")


class GameOverEventSerializer(_EventBase):
    type = ConstantField("game_over")
    winners = serializers.ListField(child=serializers.IntegerField())
    scores = serializers.ListField(child=serializers.IntegerField())


EVENT_SERIALIZERS: dict[str, type[serializers.Serializer]] = {
    "deal": DealEventSerializer,
    "turn_start": TurnStartEventSerializer,
    "draw": DrawEventSerializer,
    "play": PlayEventSerializer,
    "move_pile": MovePileEventSerializer,
    "end_turn": EndTurnEventSerializer,
    "hand_over": HandOverEventSerializer,
    "game_over": GameOverEventSerializer,
}


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="GameEvent", serializers=EVENT_SERIALIZERS, resource_type_field_name="type"
    )
)
class EventField(serializers.Field):
    """An event, rendered by the serializer of its type."""

    def to_representation(self, value: Any) -> Any:
        return _EVENT_RENDERERS[value["type"]].to_representation(value)


def _event_list(help_text: str) -> serializers.ListField:
    return serializers.ListField(child=EventField(), help_text=help_text)


# --- the game view ------------------------------------------------------------------------------------------


class GamePlayerSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["human", "computer"])
    level = serializers.ChoiceField(choices=LEVELS, allow_null=True)
    hand_count = serializers.IntegerField()
    score = serializers.IntegerField()


class TableSerializer(serializers.Serializer):
    stock = serializers.IntegerField(help_text="Cards left in the stock (never which).")
    piles = PilesSerializer()


class GameViewSerializer(serializers.Serializer):
    """A game as your seat sees it."""

    id = serializers.UUIDField()
    version = serializers.IntegerField(help_text="Rises by one with every accepted request; also the ETag.")
    status = serializers.ChoiceField(choices=Game.Status.values)
    closed_reason = serializers.CharField(
        allow_null=True,
        help_text="Why a hand still in play was closed and the game is over (`attempt_expired`: a ranked "
        "daily attempt past its finishing deadline); null otherwise.",
    )
    rules = RulesOutputSerializer()
    target_score = serializers.IntegerField(allow_null=True, help_text="Null: a single hand.")
    hand_number = serializers.IntegerField()
    dealer = serializers.IntegerField()
    current_seat = serializers.IntegerField(allow_null=True, help_text="Null when no hand is in play.")
    your_seat = serializers.IntegerField()
    is_your_turn = serializers.BooleanField()
    players = GamePlayerSerializer(many=True)
    hand = _card_list("Your cards; on your turn the turn's draw is already in it.")
    table = TableSerializer()
    legal_moves = _move_list("Your legal moves, end_turn last; empty when it is not your turn.")
    events = _event_list(
        "What happened after the version the request was made against (at most "
        f"{selectors.EVENTS_PAGE_MAX} of them when read with `since_version`)."
    )
    more_events_after = serializers.IntegerField(
        allow_null=True,
        help_text=f"Null when `events` is all that happened. A read with `since_version` shows the first "
        f"{selectors.EVENTS_PAGE_MAX} events: when more followed, this is the seq of the last one shown, to "
        "read the rest from GET events with `after` set to it.",
    )
    hand_result = HandResultSerializer(
        allow_null=True, help_text="The last hand's result when no hand is in play: every hand shown."
    )
    winners = serializers.ListField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="Seats with the lowest total, once finished.",
    )
    seed = serializers.CharField(
        allow_null=True,
        help_text="The game's seed (64 hex characters) once finished, to re-deal it as docs/rules.md says.",
    )


# One instance of each output serializer renders every response of its kind: a serializer binds (deep-copies)
# its fields when it is made, which would otherwise be paid again for every event and move of every response.
# Rendering reads the bound fields and changes nothing, so requests on several threads may share them.
_MOVE_RENDERERS = {kind: serializer() for kind, serializer in MOVE_SERIALIZERS.items()}
_EVENT_RENDERERS = {kind: serializer() for kind, serializer in EVENT_SERIALIZERS.items()}
_GAME_VIEW_RENDERER = GameViewSerializer()


def render_game_view(view: dict[str, Any]) -> dict[str, Any]:
    """The game view as GameViewSerializer renders it."""
    rendered: dict[str, Any] = _GAME_VIEW_RENDERER.to_representation(view)
    return rendered


def etag(version: int) -> str:
    return f'"{version}"'


def _game_response(
    view: dict[str, Any], *, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return Response(
        render_game_view(view),
        status=status,
        headers={"ETag": etag(view["version"]), **(headers or {})},
    )


def _change_response(change: services.GameChange) -> Response:
    return _game_response(change.view, headers={"Idempotent-Replayed": "true"} if change.replayed else None)


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


def location_header(what: str) -> OpenApiParameter:
    return response_header("Location", f"The URL of {what}.", [201], {"type": "string", "format": "uri"})


def _current_member() -> dict[str, dict[str, serializers.Field]]:
    return {
        "version_conflict": {
            "current": GameViewSerializer(
                required=False, help_text="version_conflict: the game as it is now."
            )
        }
    }


def _move_index_members(codes: tuple[str, ...]) -> dict[str, dict[str, serializers.Field]]:
    return {
        code: {
            "move_index": serializers.IntegerField(
                required=False, help_text="A refused move: its index in the request's `moves`, from 0."
            )
        }
        for code in codes
    }


class _PlayerApi(APIView):
    permission_classes = (IsAuthenticated,)


# --- players ------------------------------------------------------------------------------------------------


class PlayerTokenOutputSerializer(serializers.Serializer):
    """A player with its bearer token."""

    id = serializers.UUIDField()
    name = serializers.CharField()
    token = serializers.CharField(help_text="Shown once: send it as `Authorization: Bearer <token>`.")


def _example(name: str, key: str, **kwargs: Any) -> OpenApiExample:
    return OpenApiExample(name, value=EXAMPLES[key], **kwargs)


def _response_example(name: str, key: str, status: int = 200) -> OpenApiExample:
    return _example(name, key, response_only=True, status_codes=[str(status)])


def _request_example(name: str, key: str) -> OpenApiExample:
    return _example(name, key, request_only=True)


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

    refusals = Refusals("players_create", token="none", body="json", database=True)

    @extend_schema(
        operation_id="players_create",
        summary="Register a player",
        tags=["players"],
        auth=[],
        request=PlayerCreateInputSerializer,
        responses={201: PlayerTokenOutputSerializer, **refusals.responses()},
        parameters=[location_header("the player (players/me)"), *refusals.headers()],
        examples=[
            _request_example("A player", "players_create_request"),
            _response_example("The new player and its token", "players_create_response", 201),
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
            PlayerTokenOutputSerializer({"id": player.id, "name": player.name, "token": token}).data,
            status=201,
            headers={"Location": request.build_absolute_uri(reverse("player-me"))},
        )


class PlayerMeApi(_PlayerApi):
    class PlayerMeOutputSerializer(serializers.Serializer):
        """You, as the API knows you."""

        id = serializers.UUIDField()
        name = serializers.CharField()
        created_at = serializers.DateTimeField()

    refusals = Refusals("players_me", token="required")

    @extend_schema(
        operation_id="players_me",
        summary="Who you are",
        tags=["players"],
        responses={200: PlayerMeOutputSerializer, **refusals.responses()},
        parameters=refusals.headers(),
        examples=[_response_example("You", "players_me_response"), *refusals.examples()],
        description="The player the token names: a quick way to check that a token works.",
    )
    def get(self, request: Request) -> Response:
        return Response(self.PlayerMeOutputSerializer(request.user).data)


class PlayerTokenRotateApi(_PlayerApi):
    # A token replaced by a rotation still reaches the service here: see BearerTokenAuthentication.
    accepts_rotated_token = True

    refusals = Refusals(
        "players_token_rotate", "invalid_idempotency_key", "token_rotated", token="required", body="ignored"
    )

    @extend_schema(
        operation_id="players_token_rotate",
        summary="Replace your token",
        tags=["players"],
        request=None,
        responses={200: PlayerTokenOutputSerializer, **refusals.responses()},
        parameters=[IDEMPOTENCY_KEY_PARAMETER, IDEMPOTENT_REPLAYED_HEADER, *refusals.headers()],
        examples=[_response_example("Your new token", "players_token_rotate_response"), *refusals.examples()],
        description="Issues a new token and revokes the one this request was sent with at once. No body.\n\n"
        "A token is rotated from once: of rotations sent at the same time with one token, one answers with "
        "the new token and the others with 409 `token_rotated`. Send an `Idempotency-Key` so that a rotation "
        "whose response was lost can be sent again, with the same (now replaced) token and key, within 24 "
        "hours: it answers with the same new token (`Idempotent-Replayed: true`) instead of locking you out. "
        "The server keeps that new token only encrypted under a key derived from the replaced token and the "
        "Idempotency-Key, which it does not store.",
    )
    def post(self, request: Request) -> Response:
        rotated = services.player_token_rotate(
            player=request.user, token=request.auth, idempotency_key=idempotency_key(request)
        )
        body = {"id": request.user.id, "name": request.user.name, "token": rotated.token}
        headers = {"Idempotent-Replayed": "true"} if rotated.replayed else None
        return Response(PlayerTokenOutputSerializer(body).data, headers=headers)


# --- games --------------------------------------------------------------------------------------------------


class GamePagination(CursorPagination):
    ordering = ("-created_at", "-id")
    page_size = 20
    page_size_query_param = "limit"
    max_page_size = 100

    def get_page_size(self, request: Request) -> int:
        # DRF falls back to the default on a limit it cannot read and caps one too large; a limit the
        # schema does not allow is refused instead, as the leaderboard's is.
        value = request.query_params.get(self.page_size_query_param)
        if value is None:
            return self.page_size
        if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= self.max_page_size:
            raise InvalidLimit(f"limit is a whole number from 1 to {self.max_page_size}.")
        return int(value)

    def decode_cursor(self, request: Request) -> Any:
        try:
            cursor = super().decode_cursor(request)
            # The position is read as a time by the query; a cursor that names no time is not ours.
            if cursor is not None and cursor.position is not None and not parse_datetime(cursor.position):
                raise NotFound
        except (NotFound, ValueError):
            raise InvalidCursor("Not a cursor this API gave out: use `next`.") from None
        return cursor


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


class GameCollectionApi(_PlayerApi):
    class GameCreateInputSerializer(StrictInputSerializer):
        """The options of a new game; all may be left out."""

        opponents = StrictIntegerField(
            min_value=1,
            max_value=len(NAMES),
            required=False,
            help_text="How many computer players (default 3).",
        )
        level = serializers.ChoiceField(
            choices=LEVEL_CHOICES,
            required=False,
            help_text="Every opponent's level (default normal); hard is another name for sharp. Give level "
            "or levels, not both.",
        )
        levels = serializers.ListField(
            child=serializers.ChoiceField(choices=LEVEL_CHOICES),
            min_length=1,
            max_length=len(NAMES),
            required=False,
            help_text="One level per opponent, seats 1.. in order (Millie, Roy, Bess); with `opponents`, "
            "as many levels as opponents.",
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
            r"^[0-9a-fA-F]{64}$", required=False, help_text="64 hex characters for a reproducible deal."
        )

        schema_constraints = {
            "not": {"required": ["level", "levels"]},
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
            if "level" in data and "levels" in data:
                raise serializers.ValidationError({"levels": ["Give level or levels, not both."]})
            if "levels" in data:
                if "opponents" in data and data["opponents"] != len(data["levels"]):
                    raise serializers.ValidationError({"levels": ["Give one level per opponent."]})
                return data
            data["levels"] = [data.get("level", "normal")] * data.get("opponents", len(NAMES))
            return data

    class GameListFilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=Game.Status.values, required=False)

    class GameSummarySerializer(serializers.Serializer):
        """A game in your list: who plays, the scores and whose turn it is, without the cards."""

        id = serializers.UUIDField()
        version = serializers.IntegerField()
        status = serializers.ChoiceField(choices=Game.Status.values)
        closed_reason = serializers.CharField(allow_null=True, help_text="As in the game view.")
        rules = RulesOutputSerializer()
        target_score = serializers.IntegerField(allow_null=True)
        hand_number = serializers.IntegerField()
        is_your_turn = serializers.BooleanField()
        players = GamePlayerSerializer(many=True)
        winners = serializers.ListField(child=serializers.IntegerField(), allow_null=True)
        created_at = serializers.DateTimeField()
        updated_at = serializers.DateTimeField()

    class GameListOutputSerializer(serializers.Serializer):
        """A page of your games, newest first."""

        next = serializers.URLField(allow_null=True, help_text="The next (older) page, or null.")
        previous = serializers.URLField(allow_null=True, help_text="The previous (newer) page, or null.")

        def get_fields(self) -> dict[str, serializers.Field]:
            fields = super().get_fields()
            fields["results"] = GameCollectionApi.GameSummarySerializer(many=True)
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
        examples=[_response_example("A page of one game", "games_list_response"), *list_refusals.examples()],
        description="Your games, newest first, a page at a time: follow `next` until it is null. "
        "`status` keeps the games that are `playing`, `hand_over` (between two hands) or `finished`.",
    )
    def get(self, request: Request) -> Response:
        # A plain dict, not the QueryDict: DRF skips an empty optional field of form data (`?status=`)
        # rather than refusing it.
        filters = self.GameListFilterSerializer(data=request.query_params.dict())
        if not filters.is_valid():
            raise InvalidStatus(f"status is one of {', '.join(Game.Status.values)}.")
        paginator = GamePagination()
        games = paginator.paginate_queryset(
            selectors.game_list(player=request.user, status=filters.validated_data.get("status")),
            request,
            self,
        )
        page = {
            "next": paginator.get_next_link(),
            "previous": paginator.get_previous_link(),
            "results": [selectors.game_summary(game=game, player=request.user) for game in games or []],
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
            _request_example("One hand against one sharp player, from a seed", "games_create_request"),
            _response_example("The new game, your turn", "games_create_response", 201),
            *create_refusals.examples(),
        ],
        description="Starts a game with you in seat 0 and the computer players after you. The first hand "
        "is dealt; `events` are the deal and any turns before yours, and on your turn the turn's draw is "
        "already in your hand. The same `seed` deals the same cards.",
    )
    def post(self, request: Request) -> Response:
        data = self.GameCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        seed = values.get("seed")
        game = services.game_create(
            player=request.user,
            levels=values["levels"],
            rules=make_rules(values.get("rules")),
            target_score=values["target_score"],
            seed=bytes.fromhex(seed) if seed else None,
        )
        view = selectors.game_view(game=game, player=request.user, since_version=0)
        location = request.build_absolute_uri(reverse("game-detail", args=[game.id]))
        return _game_response(view, status=201, headers={"Location": location})


class GameDetailApi(_PlayerApi):
    class GameDetailQuerySerializer(serializers.Serializer):
        since_version = serializers.IntegerField(
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
        examples=[_response_example("A game on your turn", "games_get_response"), *refusals.examples()],
        description="The game as your seat sees it: your hand, the table, every hand's size, your legal "
        "moves. Other hands and the stock's order are never shown. `since_version` adds what happened "
        f"after that version, at most {selectors.EVENTS_PAGE_MAX} events: when more happened, "
        "`more_events_after` names the last one shown, and GET events?after=<it> pages through the rest. "
        "The ETag is the version, to send back as If-Match.",
    )
    def get(self, request: Request, game_id: str) -> Response:
        query = self.GameDetailQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        game = selectors.game_get(game_id=game_id, player=request.user)
        since = query.validated_data.get("since_version")
        return _game_response(selectors.game_view(game=game, player=request.user, since_version=since))


class GameMovesApi(_PlayerApi):
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
        "game_over",
        "hand_over",
        "attempt_expired",
        *MOVE_REFUSAL_CODES,
        token="required",
        body="json",
        members={**_current_member(), **_move_index_members((*MOVE_READ_CODES, *MOVE_REFUSAL_CODES))},
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
        parameters=[
            IF_MATCH_PARAMETER,
            IDEMPOTENCY_KEY_PARAMETER,
            ETAG_HEADER,
            CONFLICT_ETAG_HEADER,
            IDEMPOTENT_REPLAYED_HEADER,
            *refusals.headers(),
        ],
        request=GameMovesInputSerializer,
        responses={200: GameViewSerializer, **refusals.responses()},
        examples=[
            _request_example("A whole turn", "games_moves_request"),
            _response_example(
                "After the turn: what the computer players did, and your next turn", "games_moves_response"
            ),
            *refusals.examples(),
        ],
        description="Applies your moves in order, all or none, as one new version of the game. A `play` "
        "without `to` goes where sharp would put it, except where hints are refused (a ranked daily attempt "
        "unfinished): there on the first pile, in the order N E S W NE SE SW NW, that takes it. "
        "After an `end_turn` the computer players take their "
        "turns at once, and `events` tells what they did, up to your next turn's draw.\n\n"
        "Name the version you played against, in `expected_version` or If-Match: a stale one is a 409 "
        "`version_conflict` with the game as it is in `current`. A move the engine cannot read is a 400, "
        "one it refuses a 422; either way `code` is the engine's reason and `move_index` the move's place, "
        "and nothing was applied. An `Idempotency-Key` makes a retry answer with the first response.",
    )
    def post(self, request: Request, game_id: str) -> Response:
        data = self.GameMovesInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        change = services.game_moves_apply(
            game_id=game_id,
            player=request.user,
            moves=data.validated_data["moves"],
            expected_version=expected_version(request, data.validated_data.get("expected_version")),
            idempotency_key=idempotency_key(request),
        )
        return _change_response(change)


class GameHandDealApi(_PlayerApi):
    class GameHandDealInputSerializer(StrictInputSerializer):
        """The version you deal against; the body may be left out."""

        expected_version = StrictIntegerField(
            min_value=1, required=False, allow_null=True, help_text="The same as If-Match."
        )

    refusals = Refusals(
        "games_hands_deal",
        *GAME_WRITE_CODES,
        "hand_in_progress",
        "game_over",
        "attempt_expired",
        token="required",
        body="json",
        members=_current_member(),
        example_members={
            "version_conflict": {"current": EXAMPLES["games_moves_version_conflict"]["current"]}
        },
    )

    @extend_schema(
        operation_id="games_hands_deal",
        summary="Deal the next hand",
        tags=["games"],
        parameters=[
            IF_MATCH_PARAMETER,
            IDEMPOTENCY_KEY_PARAMETER,
            ETAG_HEADER,
            CONFLICT_ETAG_HEADER,
            IDEMPOTENT_REPLAYED_HEADER,
            *refusals.headers(),
        ],
        request=GameHandDealInputSerializer,
        responses={200: GameViewSerializer, **refusals.responses()},
        examples=[
            OpenApiExample("Against version 9", value={"expected_version": 9}, request_only=True),
            _response_example("The next hand, dealt", "games_hands_deal_response"),
            *refusals.examples(),
        ],
        description="Deals the next hand when one is over (`status` is `hand_over`) and the game is not; "
        "the deal passes one seat to the left, and the computer players before you take their turns. "
        "Otherwise 409: `hand_in_progress` or `game_over`.",
    )
    def post(self, request: Request, game_id: str) -> Response:
        data = self.GameHandDealInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        change = services.game_hand_deal(
            game_id=game_id,
            player=request.user,
            expected_version=expected_version(request, data.validated_data.get("expected_version")),
            idempotency_key=idempotency_key(request),
        )
        return _change_response(change)


class GameEventsApi(_PlayerApi):
    class GameEventsQuerySerializer(serializers.Serializer):
        after = serializers.IntegerField(min_value=0, default=0, help_text="Events after this seq.")
        limit = serializers.IntegerField(
            min_value=1,
            max_value=selectors.EVENTS_PAGE_MAX,
            default=selectors.EVENTS_PAGE_MAX,
            help_text=f"Events a page, 1 to {selectors.EVENTS_PAGE_MAX}.",
        )

    class GameEventsOutputSerializer(serializers.Serializer):
        """A page of the game's event log."""

        events = _event_list("The events after `after`, in order.")
        last = serializers.IntegerField(help_text="The seq to pass as `after` next time.")
        has_more = serializers.BooleanField(help_text="Whether more events follow this page.")

    refusals = Refusals("games_events", "invalid_request", "not_found", "game_not_found", token="required")

    @extend_schema(
        operation_id="games_events",
        summary="Read the event log",
        tags=["games"],
        parameters=[GameEventsQuerySerializer, *refusals.headers()],
        responses={200: GameEventsOutputSerializer, **refusals.responses()},
        examples=[_response_example("The first events", "games_events_response"), *refusals.examples()],
        description="Everything that happened in the game, in order, as you may see it: your draws name "
        "their card, the others' do not. Page with `after` (the last `seq` you have) and `limit`.",
    )
    def get(self, request: Request, game_id: str) -> Response:
        query = self.GameEventsQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        game = selectors.game_get(game_id=game_id, player=request.user)
        page = selectors.game_events(game=game, **query.validated_data)
        return Response(self.GameEventsOutputSerializer(page).data)


class GameHintApi(_PlayerApi):
    class GameHintOutputSerializer(serializers.Serializer):
        """The moves sharp's search would make for the rest of your turn."""

        version = serializers.IntegerField(help_text="The version the hint is for.")
        moves = _move_list("The moves, in order, end_turn last.")

    refusals = Refusals(
        "games_hint",
        "not_found",
        "game_not_found",
        "hints_refused_in_ranked_attempt",
        "game_over",
        "hand_over",
        "attempt_expired",
        token="required",
    )

    @extend_schema(
        operation_id="games_hint",
        summary="Get a hint",
        tags=["games"],
        parameters=refusals.headers(),
        responses={200: GameHintOutputSerializer, **refusals.responses()},
        examples=[_response_example("Sharp's turn", "games_hint_response"), *refusals.examples()],
        description="The moves the sharp computer player would make for the rest of your turn, from what "
        "your seat sees; send them to POST moves as they are. Refused (403) in every game at a daily "
        "deal while your ranked attempt at it is unfinished.",
    )
    def get(self, request: Request, game_id: str) -> Response:
        game = selectors.game_get(game_id=game_id, player=request.user)
        return Response(self.GameHintOutputSerializer(selectors.game_hint(game=game)).data)


# --- analysis -----------------------------------------------------------------------------------------------


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

    class AnalysisOutputSerializer(serializers.Serializer):
        """The moves of a position."""

        legal_moves = _move_list("Every legal move, end_turn last.")
        best_turn = _move_list("The moves sharp's search would make for the rest of the turn.")

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
            _request_example("A position", "analysis_request"),
            _response_example("Its moves", "analysis_response"),
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
            player=request.user if request.auth is not None else None,
            rules=make_rules(values.get("rules")),
            hand=values["hand"],
            piles=values.get("piles", {}),
            stock=values.get("stock", 0),
        )
        return Response(self.AnalysisOutputSerializer(analysis).data)
