"""The person stream: one Server-Sent Events feed per person of what concerns them at every table and of the
daily deal (games.services.person_feed), its tickets, and its events' definitions."""

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse, StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from games import streams
from games.apis.auth import BearerTokenAuthentication, StreamTicketAuthentication, request_player
from games.apis.responses import PlayerApi, response_example
from games.apis.streams import (
    EVENT_STREAM,
    RETRY_MESSAGE,
    GameStreamTicketApi,
    _EventStreamRegardless,
    _first_event,
    _LastEventIdField,
    held,
    stream_start_after,
)
from games.errors import InvalidTicket
from games.models import Player
from games.shapes import PersonEventView
from games.stream_leases import StreamLease
from kingscorner.api.async_views import AsyncApiView
from kingscorner.api.examples import EXAMPLES
from kingscorner.api.fields import no_body
from kingscorner.api.openapi import EMPTY_BODY, Refusals
from kingscorner.client_address import client_address

# --- the events ---------------------------------------------------------------------------------------------


# The fields of each type of person event, beside `seq`, `type` and `at`.
PERSON_EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "seat_taken": ("game", "seat", "name"),
    "seat_left": ("game", "seat", "name"),
    "game_started": ("game",),
    "your_turn": ("game", "seat", "deadline"),
    "game_over": ("game",),
    "rematch": ("game", "new_game"),
    "invitation_revoked": ("game",),
    "seat_replaced": ("game", "seat", "by"),
    "daily_deal": ("date",),
    "daily_revealed": ("date",),
    "daily_par": ("date", "par"),
    "daily_closed": ("date",),
    "resync": ("reason",),
}


class PersonEventSerializer(serializers.Serializer[Any]):
    """An event of the person stream: `seq`, `type`, `at`, and its type's fields (docs/tables-and-streams.md,
    "The person stream"). It renders each type's fields only (PERSON_EVENT_FIELDS), and its schema is one
    variant a type, told apart by `type` (PersonEventSerializerExtension)."""

    seq = serializers.IntegerField()
    type = serializers.ChoiceField(choices=list(PERSON_EVENT_FIELDS))
    at = serializers.DateTimeField()
    game = serializers.UUIDField(required=False, help_text="The table.")
    seat = serializers.IntegerField(required=False)
    name = serializers.CharField(required=False, help_text="Who, as the game's seats name them.")
    deadline = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="When the turn runs out at a clocked table; null without a clock or for a turn that ended "
        "within the request that began it.",
    )
    new_game = serializers.UUIDField(required=False, help_text="The rematch.")
    by = serializers.CharField(required=False, help_text="The computer now in the seat.")
    date = serializers.DateField(required=False, help_text="The daily deal's day.")
    par = serializers.IntegerField(
        required=False, help_text="The day's par (again when a better one is found)."
    )
    reason = serializers.ChoiceField(
        choices=["expired", "unknown_id"],
        required=False,
        help_text="Why to re-read your state: the events after your id are no longer kept (expired), or it "
        "was never given (unknown_id).",
    )

    def to_representation(self, instance: Any) -> dict[str, Any]:
        shown = {"seq", "type", "at", *PERSON_EVENT_FIELDS[instance["type"]]}
        return {key: value for key, value in super().to_representation(instance).items() if key in shown}


class PersonEventSerializerExtension(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """The PersonEvent schema: one variant a type, with that type's fields only, under `oneOf`, each
    naming its `type` with a one-value enum (inline variants rather than a component each: the document's
    budget)."""

    target_class = PersonEventSerializer

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        fields = self.target.fields
        variants = []
        for kind, names in PERSON_EVENT_FIELDS.items():
            properties = {
                "seq": auto_schema._map_serializer_field(fields["seq"], direction),
                "type": {"type": "string", "enum": [kind]},
                "at": auto_schema._map_serializer_field(fields["at"], direction),
                **{name: auto_schema._map_serializer_field(fields[name], direction) for name in names},
            }
            variants.append(
                {
                    # A title a variant names the model code generators make of it (PersonEventYourTurn).
                    "title": "PersonEvent" + "".join(part.title() for part in kind.split("_")),
                    "type": "object",
                    "properties": properties,
                    "required": ["seq", "type", "at", *names],
                    "additionalProperties": False,
                }
            )
        return {
            "description": "An event of the person stream, one variant a `type`: `seq` (in your own "
            "sequence: the `id`), `at` (when it happened; a daily event: when it was announced) and the "
            "type's fields (docs/tables-and-streams.md).",
            # Each variant names its `type` with a one-value enum; no discriminator, whose mapping would
            # need a component a variant (code generators read no JSON pointer into a oneOf).
            "oneOf": variants,
        }


PERSON_EVENT_RENDERER = PersonEventSerializer()


def _person_message(event: PersonEventView | streams.Heartbeat) -> bytes:
    assert not isinstance(event, streams.Heartbeat)
    data = json.dumps(PERSON_EVENT_RENDERER.to_representation(event), separators=(",", ":"))
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n".encode()


PERSON_EVENT_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "event": {"type": "string", "description": "The data's `type`."},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": {"$ref": "#/components/schemas/PersonEvent"},
            "description": "The event in JSON.",
        },
    },
    "required": ["id", "event", "data"],
}


# --- the operations -----------------------------------------------------------------------------------------


class PersonStreamTicketApi(PlayerApi):
    refusals = Refusals("players_stream_ticket", token="required", body="empty")

    @extend_schema(
        operation_id="players_stream_ticket",
        summary="Get a person stream ticket",
        tags=["players"],
        request=EMPTY_BODY,
        parameters=refusals.headers(),
        responses={201: GameStreamTicketApi.StreamTicketSerializer, **refusals.responses()},
        examples=[
            response_example("A ticket", "players_stream_ticket_response", 201),
            *refusals.examples(),
        ],
        description="A ticket for `new EventSource(url)` on your person stream, as a game's stream "
        "ticket is for that game's stream: it opens and re-opens your person stream until `expires_at`, "
        "`STREAM_TICKET_SECONDS` (6 hours) from now, so EventSource's own reconnects keep working; it dies "
        "with the token it was asked for, and is never written to the servers' access logs.",
    )
    def post(self, request: Request) -> Response:
        no_body(request)
        ticket, expires_at = streams.ticket_issue(game_id=None, player=request_player(request))
        url = request.build_absolute_uri(reverse("person-stream"))
        body = {"ticket": ticket, "expires_at": expires_at, "url": f"{url}?ticket={ticket}"}
        return Response(GameStreamTicketApi.StreamTicketSerializer(body).data, status=201)


async def _person_live(player: Player, after: int | None, lease: StreamLease) -> AsyncIterator[bytes]:
    events = streams.person_events_live(player_id=player.pk, after=after)
    async for message in held(events, player, lease, _person_message):
        yield message


def _person_now(player_id: Any, after: int | None) -> Iterator[bytes]:
    yield RETRY_MESSAGE
    for event in streams.person_events_now(player_id=player_id, after=after):
        yield _person_message(event)


class _PersonStreamSchema(AutoSchema):
    """The operation's schema, with the PersonEvent component its events' `data` refers to registered."""

    def get_operation(self, *args: Any, **kwargs: Any) -> Any:
        operation = super().get_operation(*args, **kwargs)
        self.resolve_serializer(PersonEventSerializer, "response")
        return operation


class PersonStreamApi(AsyncApiView):
    schema = _PersonStreamSchema()
    authentication_classes = (StreamTicketAuthentication, BearerTokenAuthentication)
    permission_classes = (IsAuthenticated,)
    content_negotiation_class = _EventStreamRegardless

    class PersonStreamQuerySerializer(serializers.Serializer[Any]):
        last_event_id = _LastEventIdField(help_text="As Last-Event-ID, which wins when both are sent.")

    refusals = Refusals(
        "players_stream",
        "invalid_request",
        "invalid_ticket",
        "too_many_streams",
        token="required",
        negotiated=False,
        meanings={
            "invalid_ticket": "The stream ticket was not given out here, has expired, is for a game's "
            "stream, or was asked for with a token since replaced: ask for a new one "
            "(POST players/me/stream-tickets)."
        },
    )

    def open(self, request: Request) -> tuple[Player, int | None]:
        """The stream's player and the seq it starts after: None when the request names no id (it starts
        with the oldest event kept), where an id, 0 included, is one the client got (0: a `resync` before
        the first event), after which a gap is told by a `resync`."""
        after = stream_start_after(request, self.PersonStreamQuerySerializer)
        named = request.headers.get("Last-Event-ID", "").strip() or "last_event_id" in request.query_params
        ticket = request.auth
        if isinstance(ticket, streams.StreamTicket) and ticket.game_id is not None:
            raise InvalidTicket("This stream ticket is for a game's stream, not your person stream.")
        return request_player(request), after if named else None

    @extend_schema(
        operation_id="players_stream",
        summary="Stream your events",
        tags=["players"],
        parameters=[
            PersonStreamQuerySerializer,
            OpenApiParameter(
                "Last-Event-ID",
                {"type": "integer", "minimum": 0},
                OpenApiParameter.HEADER,
                description="The last `id` you got.",
            ),
            *refusals.headers(),
        ],
        responses={
            (200, EVENT_STREAM): OpenApiResponse(
                response=PERSON_EVENT_SCHEMA,
                description="Your events after the id you resumed from, then each as it happens.",
            ),
            **refusals.responses(),
        },
        examples=[
            OpenApiExample(
                "A table of yours started",
                value=_first_event(EXAMPLES["players_stream_response"]),
                response_only=True,
                status_codes=["200"],
                media_type=EVENT_STREAM,
            ),
            *refusals.examples(),
        ],
        description="Your own feed, of every table and the daily deal (PersonEvent); its ids are your "
        "own gap-free sequence. Kept `PERSON_EVENTS_RETENTION_SECONDS`: after an id whose events are gone, "
        "or one never given, `resync` comes first. Otherwise as the game stream.",
    )
    async def get(self, request: Request) -> HttpResponse | StreamingHttpResponse:
        player, after = self.opened()
        content: AsyncIterator[bytes] | Iterator[bytes]
        lease = StreamLease(player_id=player.pk, address=client_address(request._request))
        if isinstance(request._request, ASGIRequest):
            await lease.take()
            content = _person_live(player, after, lease)
        else:
            await lease.check()
            content = _person_now(player.pk, after)
        response = StreamingHttpResponse(content, content_type=EVENT_STREAM)
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"
        return response
