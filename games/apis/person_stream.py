"""The person stream: one Server-Sent Events feed per person of what concerns them at every table and of the
daily deal (games.services.person_feed), its tickets, and its events' definitions."""

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse, StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
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
    _LastEventIdField,
    held,
    stream_after,
)
from games.errors import InvalidTicket
from games.models import Player
from games.shapes import PersonEventView
from games.stream_leases import StreamLease
from kingscorner.api.async_views import AsyncApiView
from kingscorner.api.examples import EXAMPLES
from kingscorner.api.fields import ConstantField
from kingscorner.api.openapi import Refusals
from kingscorner.api.output import Render, compiled
from kingscorner.client_address import client_address

# --- the events ---------------------------------------------------------------------------------------------


class _PersonEventBase(serializers.Serializer[Any]):
    seq = serializers.IntegerField(help_text="The event's place in your own sequence, from 1: its `id`.")
    at = serializers.DateTimeField(help_text="When it happened.")


def _game(help_text: str = "The game (table) it happened at.") -> serializers.UUIDField:
    return serializers.UUIDField(help_text=help_text)


class PersonSeatTakenEventSerializer(_PersonEventBase):
    type = ConstantField("seat_taken")
    game = _game()
    seat = serializers.IntegerField()
    name = serializers.CharField(help_text="Who took the seat, as `Ada#4821` (never you).")


class PersonSeatLeftEventSerializer(_PersonEventBase):
    type = ConstantField("seat_left")
    game = _game()
    seat = serializers.IntegerField()
    name = serializers.CharField(help_text="Who left, as `Ada#4821`.")


class PersonGameStartedEventSerializer(_PersonEventBase):
    type = ConstantField("game_started")
    game = _game()


class PersonYourTurnEventSerializer(_PersonEventBase):
    type = ConstantField("your_turn")
    game = _game()
    seat = serializers.IntegerField(help_text="Your seat there.")
    deadline = serializers.DateTimeField(
        allow_null=True, help_text="When the turn runs out at a table with a turn clock; null without one."
    )


class PersonGameOverEventSerializer(_PersonEventBase):
    type = ConstantField("game_over")
    game = _game()


class PersonRematchEventSerializer(_PersonEventBase):
    type = ConstantField("rematch")
    game = _game("The finished game.")
    new_game = _game("Its rematch, where you are seated.")


class PersonInvitationRevokedEventSerializer(_PersonEventBase):
    type = ConstantField("invitation_revoked")
    game = _game()


class PersonSeatReplacedEventSerializer(_PersonEventBase):
    type = ConstantField("seat_replaced")
    game = _game("The game where your seat was handed to a computer: you are seated there no more.")
    seat = serializers.IntegerField()
    by = serializers.CharField(help_text="The computer that took the seat.")


class _DailyEventBase(_PersonEventBase):
    date = serializers.DateField(help_text="The daily deal's day (GET daily/{date}).")


class PersonDailyDealEventSerializer(_DailyEventBase):
    type = ConstantField("daily_deal")


class PersonDailyRevealedEventSerializer(_DailyEventBase):
    type = ConstantField("daily_revealed")


class PersonDailyParEventSerializer(_DailyEventBase):
    type = ConstantField("daily_par")
    par = serializers.IntegerField(help_text="The day's par result.")


class PersonDailyClosedEventSerializer(_DailyEventBase):
    type = ConstantField("daily_closed")


class PersonResyncEventSerializer(_PersonEventBase):
    type = ConstantField("resync")
    reason = serializers.ChoiceField(
        choices=["expired", "unknown_id"],
        help_text="`expired`: events after the id you resumed from are no longer kept; `unknown_id`: the "
        "id was never given. Read the state again (GET players/me/games, GET daily, …); the events kept "
        "follow.",
    )


PERSON_EVENT_SERIALIZERS: dict[str, type[serializers.Serializer[Any]]] = {
    "seat_taken": PersonSeatTakenEventSerializer,
    "seat_left": PersonSeatLeftEventSerializer,
    "game_started": PersonGameStartedEventSerializer,
    "your_turn": PersonYourTurnEventSerializer,
    "game_over": PersonGameOverEventSerializer,
    "rematch": PersonRematchEventSerializer,
    "invitation_revoked": PersonInvitationRevokedEventSerializer,
    "seat_replaced": PersonSeatReplacedEventSerializer,
    "daily_deal": PersonDailyDealEventSerializer,
    "daily_revealed": PersonDailyRevealedEventSerializer,
    "daily_par": PersonDailyParEventSerializer,
    "daily_closed": PersonDailyClosedEventSerializer,
    "resync": PersonResyncEventSerializer,
}
PERSON_EVENT_RENDERINGS: dict[str, Render] = {
    kind: compiled(serializer()) for kind, serializer in PERSON_EVENT_SERIALIZERS.items()
}
PERSON_EVENT_COMPONENT = PolymorphicProxySerializer(
    component_name="PersonEvent",
    serializers=dict(PERSON_EVENT_SERIALIZERS),
    resource_type_field_name="type",
)


def _person_message(event: PersonEventView | streams.Heartbeat) -> bytes:
    assert not isinstance(event, streams.Heartbeat)
    data = json.dumps(PERSON_EVENT_RENDERINGS[event["type"]](event), separators=(",", ":"))
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n".encode()


PERSON_EVENT_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": "^[0-9]+$", "description": "The event's seq: Last-Event-ID."},
        "event": {"type": "string", "enum": list(PERSON_EVENT_SERIALIZERS), "description": "Its type."},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": {"$ref": "#/components/schemas/PersonEvent"},
            "description": "The event (a PersonEvent), in JSON.",
        },
    },
    "required": ["id", "event", "data"],
}


# --- the operations -----------------------------------------------------------------------------------------


class PersonStreamTicketApi(PlayerApi):
    refusals = Refusals("players_stream_ticket", token="required", body="ignored")

    @extend_schema(
        operation_id="players_stream_ticket",
        summary="Get a person stream ticket",
        tags=["players"],
        request=None,
        parameters=refusals.headers(),
        responses={201: GameStreamTicketApi.StreamTicketSerializer, **refusals.responses()},
        examples=[
            response_example("A ticket", "players_stream_ticket_response", 201),
            *refusals.examples(),
        ],
        description="A signed ticket that opens your person stream (GET players/me/stream), for clients "
        "that cannot send the Authorization header, such as a browser's `EventSource`: open "
        "`new EventSource(url)`. It opens that stream only (a game's stream refuses it, as the person "
        "stream refuses a game's ticket: 401 `invalid_ticket`), for every open before `expires_at` "
        "(`STREAM_TICKET_SECONDS`), and dies with the token it was asked for: rotating your token "
        "revokes it.",
    )
    def post(self, request: Request) -> Response:
        ticket, expires_at = streams.ticket_issue(game_id=None, player=request_player(request))
        url = request.build_absolute_uri(reverse("person-stream"))
        body = {"ticket": ticket, "expires_at": expires_at, "url": f"{url}?ticket={ticket}"}
        return Response(GameStreamTicketApi.StreamTicketSerializer(body).data, status=201)


async def _person_live(player: Player, after: int, lease: StreamLease) -> AsyncIterator[bytes]:
    events = streams.person_events_live(player_id=player.pk, after=after)
    async for message in held(events, player, lease, _person_message):
        yield message


def _person_now(player_id: Any, after: int) -> Iterator[bytes]:
    yield RETRY_MESSAGE
    for event in streams.person_events_now(player_id=player_id, after=after):
        yield _person_message(event)


class PersonStreamApi(AsyncApiView):
    authentication_classes = (StreamTicketAuthentication, BearerTokenAuthentication)
    permission_classes = (IsAuthenticated,)
    content_negotiation_class = _EventStreamRegardless

    class PersonStreamQuerySerializer(serializers.Serializer[Any]):
        last_event_id = _LastEventIdField(
            help_text="Start after this event seq, for a client that cannot send the Last-Event-ID header; "
            "the header wins when both are sent (EventSource sends it when it reconnects)."
        )

    refusals = Refusals(
        "players_stream", "invalid_request", "invalid_ticket", "too_many_streams", token="required"
    )

    @extend_schema(
        operation_id="players_stream",
        summary="Stream your events (the person stream)",
        tags=["players"],
        parameters=[
            PersonStreamQuerySerializer,
            OpenApiParameter(
                "Last-Event-ID",
                {"type": "integer", "minimum": 0},
                OpenApiParameter.HEADER,
                description="The `id` of the last event you got: the stream starts after it (0 or none: "
                "from the oldest event kept). EventSource sends it when it reconnects.",
            ),
            *refusals.headers(),
        ],
        responses={
            (200, EVENT_STREAM): OpenApiResponse(
                response=PERSON_EVENT_SCHEMA,
                description="`retry: 3000`, then every event of your feed after the id you resumed from "
                "(`id:` its seq in your own sequence, `event:` its type, `data:` the event as JSON), then "
                "each new one as it happens; a `: heartbeat` comment line when nothing was sent for 15 "
                "seconds. It goes on until your token is rotated.",
            ),
            **refusals.responses(),
        },
        examples=[
            OpenApiExample(
                "A seat taken at your table",
                value=EXAMPLES["players_stream_response"],
                response_only=True,
                status_codes=["200"],
                media_type=EVENT_STREAM,
            ),
            *refusals.examples(),
        ],
        description="One feed per person of what concerns you at every table and of the daily deal, as "
        "Server-Sent Events: `seat_taken` and `seat_left` at your tables, `game_started`, `your_turn` "
        "(with its `deadline` at a clocked table) at any table, `game_over`, `rematch`, "
        "`invitation_revoked`, `seat_replaced` (your seat handed to a computer), and `daily_deal`, "
        "`daily_revealed`, `daily_par` and `daily_closed`. Hold it and a game stream for the table on "
        "screen, and nothing needs polling. Its ids are your own sequence (1, 2, 3, … without a gap, in the "
        "order things happened): reconnect with the last `id` you got (`Last-Event-ID`, or "
        "`last_event_id`) and nothing is missed or sent twice. Events are kept "
        "`PERSON_EVENTS_RETENTION_SECONDS` (7 days): resuming from an id whose following events are gone, "
        "or from an id never given, sends `resync` first (its `id` the seq before the oldest event kept): "
        "read the state again, then the oldest events kept follow. Never a silent gap. Authentication, "
        "`retry`, heartbeats and the caps (`too_many_streams`) are the game stream's; a ticket from POST "
        "players/me/stream-tickets opens it from a browser's EventSource.",
    )
    async def get(self, request: Request) -> HttpResponse | StreamingHttpResponse:
        query = self.PersonStreamQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        after = stream_after(request, query.validated_data)
        ticket = request.auth
        if isinstance(ticket, streams.StreamTicket) and ticket.game_id is not None:
            raise InvalidTicket("This stream ticket is for a game's stream, not your person stream.")
        player = request_player(request)
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
