"""The games API's schema pieces: cards, piles, moves, rules, events and the game view, each a field or
serializer that both renders and documents what it describes."""

from typing import Any

from django.urls import reverse
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import (
    PolymorphicProxySerializer,
    extend_schema_field,
)
from rest_framework import serializers

from games import selectors, services
from games.engine import DECK, OPTIONS, PILES, PRESETS, SIDES
from games.engine.cards import CARD_PATTERN
from games.engine.players import LEVELS
from games.errors import TooManyMoves
from games.models import Game
from kingscorner.api.fields import ConstantField, StrictInputSerializer
from kingscorner.api.output import Render, compiled

# The levels a request names are those the API answers with (`hard`, once another name for sharp, is
# refused since 1.1.0).
LEVEL_CHOICES = LEVELS


CARD_HELP = (
    "A card code: rank (A 2-9 T J Q K) then suit (C D H S), e.g. QD; input also takes 10, ♦ and lower case."
)


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


class _CardInput(serializers.Field):  # type: ignore[type-arg]
    """One item of a card list, as it was sent: the engine reads it and names what is wrong with it (400
    `invalid_card` for anything that is not a card's code, 5, true and null included, as a move's `card`
    is refused), so that no item is turned into text first ("5") or refused as another kind of error."""

    def to_internal_value(self, data: Any) -> Any:
        return data


@extend_schema_field(CARD_LIST_INPUT_SCHEMA)
class CardListInputField(serializers.ListField):
    """Card codes in a request, read by the engine (which names what is wrong with them)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=_CardInput(allow_null=True), **kwargs)


def _pile_pattern(names: tuple[str, ...]) -> str:
    """A pattern for pile names in either case, as the engine reads them."""
    cased = ("".join(f"[{letter}{letter.lower()}]" for letter in name) for name in names)
    return f"^(?:{'|'.join(cased)})$"


class PileNameField(serializers.ChoiceField):
    """A pile's name: in a response one of its canonical names, in a request either case."""

    def __init__(self, choices: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(choices=choices, **kwargs)


class PileNameFieldExtension(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
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


class PilesSerializer(serializers.Serializer[Any]):
    """The eight piles, each from its bottom card to its top card."""

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
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

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        fields["from"] = PileNameField(choices=SIDES, help_text="The side pile that moves.")
        fields["to"] = PileNameField(choices=PILES)
        return fields


class EndTurnMoveSerializer(StrictInputSerializer):
    type = ConstantField("end_turn")


MOVE_SERIALIZERS: dict[str, type[serializers.Serializer[Any]]] = {
    "play": PlayMoveSerializer,
    "move_pile": MovePileMoveSerializer,
    "end_turn": EndTurnMoveSerializer,
}


MOVE_SCHEMA = PolymorphicProxySerializer(
    component_name="Move",
    serializers={kind: serializer for kind, serializer in MOVE_SERIALIZERS.items()},
    resource_type_field_name="type",
)


@extend_schema_field(MOVE_SCHEMA)
class MoveField(serializers.JSONField):
    """A move: in a request its JSON as sent, which the engine reads and names what is wrong with; in a
    response rendered by the serializer of its type."""

    def to_representation(self, value: Any) -> Any:
        return MOVE_RENDERINGS[value["type"]](value)

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        # A null move is read by the engine like any other move that is not an object (400 `invalid_move`
        # with its `move_index`), as the moves view's plain-body path reads it, rather than refused here as a
        # missing value; the schema still describes a move as an object.
        if data is None:
            return False, None
        result: tuple[bool, Any] = super().validate_empty_values(data)
        return result


def move_list(help_text: str, **kwargs: Any) -> serializers.ListField:
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


_RULES_SCHEMA: dict[str, Any] = {
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


class RulesOutputSerializer(serializers.Serializer[Any]):
    """Every rule option spelled out, and the rule set it started from."""

    layout_king = serializers.ChoiceField(choices=OPTIONS["layout_king"])
    empty_side = serializers.ChoiceField(choices=OPTIONS["empty_side"])
    empty_corner = serializers.ChoiceField(choices=OPTIONS["empty_corner"])
    king_pile_to_corner = serializers.BooleanField()
    draw = serializers.ChoiceField(choices=OPTIONS["draw"])
    draw_timing = serializers.ChoiceField(choices=OPTIONS["draw_timing"])
    blocked_scoring = serializers.ChoiceField(choices=OPTIONS["blocked_scoring"])
    preset = serializers.ChoiceField(choices=list(PRESETS))


class _EventBase(serializers.Serializer[Any]):
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
    deadline = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="When a person's clocked turn runs out; else null.",
    )


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

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        fields["from"] = serializers.ChoiceField(choices=PILES[:4])
        return fields


class EndTurnEventSerializer(_EventBase):
    type = ConstantField("end_turn")
    seat = serializers.IntegerField()
    turn = serializers.IntegerField()


class HandResultSerializer(serializers.Serializer[Any]):
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


class SeatTakenEventSerializer(_EventBase):
    type = ConstantField("seat_taken")
    seat = serializers.IntegerField()
    name = serializers.CharField(help_text="The person who took the seat, as `Ada#4821`.")


class SeatLeftEventSerializer(_EventBase):
    type = ConstantField("seat_left")
    seat = serializers.IntegerField()
    name = serializers.CharField(help_text="The person who left, as `Ada#4821`.")
    level = serializers.ChoiceField(
        choices=LEVELS,
        allow_null=True,
        help_text="The level of the computer that took the seat (normal); null when the seat is free again "
        "(a table still waiting).",
    )
    computer = serializers.CharField(required=False, help_text="The computer's name, when one took the seat.")


class SeatReplacedEventSerializer(_EventBase):
    type = ConstantField("seat_replaced")
    seat = serializers.IntegerField()
    name = serializers.CharField(help_text="The absent person whose seat was replaced, as `Ada#4821`.")
    level = serializers.ChoiceField(choices=LEVELS, help_text="The level of the computer that took the seat.")
    computer = serializers.CharField(help_text="The name of the computer that took the seat.")
    by = serializers.IntegerField(help_text="The seat of the person who handed it to the computer.")


class StartedSeatSerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["person", "computer"])
    name = serializers.CharField()
    level = serializers.ChoiceField(choices=LEVELS, allow_null=True)


class GameStartedEventSerializer(_EventBase):
    type = ConstantField("game_started")
    seats = StartedSeatSerializer(many=True, help_text="Who sits where as the first hand is dealt.")


class TurnTimedOutEventSerializer(_EventBase):
    type = ConstantField("turn_timed_out")
    seat = serializers.IntegerField(
        help_text="The person whose turn ran past the clock; the moves a computer at normal made for them "
        "follow."
    )


class RematchEventSerializer(_EventBase):
    type = ConstantField("rematch")
    new_game = serializers.UUIDField(help_text="The rematch: a finished game's last event.")


EVENT_SERIALIZERS: dict[str, type[serializers.Serializer[Any]]] = {
    "deal": DealEventSerializer,
    "turn_start": TurnStartEventSerializer,
    "draw": DrawEventSerializer,
    "play": PlayEventSerializer,
    "move_pile": MovePileEventSerializer,
    "end_turn": EndTurnEventSerializer,
    "hand_over": HandOverEventSerializer,
    "game_over": GameOverEventSerializer,
    "seat_taken": SeatTakenEventSerializer,
    "seat_left": SeatLeftEventSerializer,
    "seat_replaced": SeatReplacedEventSerializer,
    "game_started": GameStartedEventSerializer,
    "turn_timed_out": TurnTimedOutEventSerializer,
    "rematch": RematchEventSerializer,
}


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="GameEvent",
        serializers={kind: serializer for kind, serializer in EVENT_SERIALIZERS.items()},
        resource_type_field_name="type",
    )
)
class EventField(serializers.Field[Any, Any, Any, Any]):
    """An event, rendered by the serializer of its type."""

    def to_representation(self, value: Any) -> Any:
        return EVENT_RENDERINGS[value["type"]](value)


def event_list(help_text: str) -> serializers.ListField:
    return serializers.ListField(child=EventField(), help_text=help_text)


class GamePlayerSerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField()
    name = serializers.CharField(
        allow_null=True,
        help_text="A person's display name with the discriminator that tells players apart (`Ada#4821`), "
        "a computer's name (`Millie`, `Roy`, `Bess`: computers have none); null: a person's seat not taken "
        "yet.",
    )
    kind = serializers.ChoiceField(choices=["person", "computer"])
    level = serializers.ChoiceField(choices=LEVELS, allow_null=True)
    hand_count = serializers.IntegerField()
    score = serializers.IntegerField()


class TableSerializer(serializers.Serializer[Any]):
    stock = serializers.IntegerField(help_text="Cards left in the stock (never which).")
    piles = PilesSerializer()


class SeatSerializer(serializers.Serializer[Any]):
    """A seat at the table."""

    seat = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["person", "computer"])
    name = serializers.CharField(
        allow_null=True,
        help_text="A person's display name (`Ada#4821`), a computer's name (`Millie`); null: a person's seat "
        "not taken yet.",
    )
    level = serializers.ChoiceField(choices=LEVELS, allow_null=True, help_text="A computer's level.")
    you = serializers.BooleanField(help_text="Whether this is your seat.")


class InvitationPathField(serializers.URLField):
    """An invitation's path, from its code (games.apis.responses makes it absolute for the request): the page
    a person opens (`play-join`, the web client's) or the API endpoint that seats the caller."""

    def __init__(self, url_name: str, **kwargs: Any) -> None:
        self.url_name = url_name
        super().__init__(**kwargs)

    def to_representation(self, value: str) -> str:
        return reverse(self.url_name, args=[value])


def invitation_page_field() -> InvitationPathField:
    return InvitationPathField(
        "play-join",
        source="code",
        help_text="The link to share: the page `/play/join/{code}`, which a person opens in a browser to see "
        "the table and take a seat. Clients that seat someone POST `join`.",
    )


def invitation_join_field() -> InvitationPathField:
    return InvitationPathField(
        "invitation-join",
        source="code",
        help_text="The API endpoint: POST it, with your token, to take a free seat; GET it to see the table.",
    )


class InvitationSerializer(serializers.Serializer[Any]):
    """The link that seats whoever has it, while the table waits for its people."""

    code = serializers.CharField(help_text="The invitation's code (unguessable).")
    url = invitation_page_field()
    join = invitation_join_field()


class InvitationPreviewSerializer(serializers.Serializer[Any]):
    """An open invitation as whoever holds its code sees it, before joining: who invites, the seats, the
    rules and the clock."""

    code = serializers.CharField(help_text="The invitation's code.")
    url = invitation_page_field()
    join = invitation_join_field()
    status = serializers.ChoiceField(
        choices=Game.Status.values, help_text="The table's status: it takes people while `waiting`."
    )
    inviter = serializers.CharField(help_text="The person who made the table, as `Ada#4821`.")
    seats = SeatSerializer(
        many=True, help_text="Every seat in order; `you` marks yours once you sit there (with a token)."
    )
    free_seats = serializers.IntegerField(help_text="People's seats still free; 0 once the table started.")
    rules = RulesOutputSerializer()
    target_score = serializers.IntegerField(allow_null=True, help_text="Null: a single hand.")
    turn_seconds = serializers.IntegerField(allow_null=True, help_text="The turn clock; null: none.")
    game = serializers.UUIDField(
        allow_null=True, help_text="The game, when you (by your token) hold a seat at it; null otherwise."
    )


class GameViewSerializer(serializers.Serializer[Any]):
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
    hand_number = serializers.IntegerField(help_text="0 while the table waits.")
    dealer = serializers.IntegerField(allow_null=True, help_text="Null while the table waits.")
    current_seat = serializers.IntegerField(allow_null=True, help_text="Null when no hand is in play.")
    your_seat = serializers.IntegerField()
    is_your_turn = serializers.BooleanField()
    players = GamePlayerSerializer(many=True)
    hand = _card_list("Your cards; on your turn the turn's draw is already in it.")
    table = TableSerializer()
    legal_moves = move_list("Your legal moves, end_turn last; empty when it is not your turn.")
    events = event_list(
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
        help_text="The game's seed (64 hex characters) once finished, to re-deal it as docs/rules.md says; "
        "null before. A daily deal's game withholds it until the day's seed is revealed "
        "(`seed_revealed_at`), as every player of the day plays the same cards.",
    )
    seats = SeatSerializer(many=True, help_text="Every seat in order; one is yours (`your_seat`).")
    invitation = InvitationSerializer(
        allow_null=True, help_text="While the table waits and its link is not revoked; null otherwise."
    )
    turn_seconds = serializers.IntegerField(allow_null=True, help_text="The turn clock; null: none.")
    turn_deadline = serializers.DateTimeField(
        allow_null=True,
        help_text="When the person to move runs out of time (a computer at normal then plays the turn); "
        "null unless a person is to move at a clocked table.",
    )
    rematch = serializers.UUIDField(
        allow_null=True, help_text="The table's next game (POST rematch), once one was asked for."
    )
    creator_seat = serializers.IntegerField(
        allow_null=True,
        help_text="Who may start the table and manage its invitation: its maker, or once they left the next "
        "seated person after them; null when no person is seated.",
    )
    abandon_seconds = serializers.IntegerField(
        allow_null=True,
        help_text="Without a clock: seconds from the start of a person's turn after which any other seated "
        "person may hand their seat to a computer (POST seats/{seat}/replace); null at a clocked table.",
    )
    turn_started_at = serializers.DateTimeField(
        allow_null=True, help_text="When the person to move began their turn; null when no person is to move."
    )
    replaceable_at = serializers.DateTimeField(
        allow_null=True,
        help_text="`turn_started_at` + `abandon_seconds`, when another person may replace the seat to "
        "move; null at a clocked table or with nobody to do it.",
    )


# One instance of each output serializer renders every move and event of every response: a serializer binds
# (deep-copies) its fields when it is made, which would otherwise be paid again for each of them. Rendering
# reads the bound fields and changes nothing, so requests on several threads may share them.
MOVE_RENDERERS = {kind: serializer() for kind, serializer in MOVE_SERIALIZERS.items()}
EVENT_RENDERERS = {kind: serializer() for kind, serializer in EVENT_SERIALIZERS.items()}
# The same, compiled (kingscorner.api.output): what every response renders with.
MOVE_RENDERINGS: dict[str, Render] = {
    kind: compiled(serializer) for kind, serializer in MOVE_RENDERERS.items()
}
EVENT_RENDERINGS: dict[str, Render] = {
    kind: compiled(serializer) for kind, serializer in EVENT_RENDERERS.items()
}
