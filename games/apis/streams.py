"""The games API's live feed: stream tickets, and a game's Server-Sent Events stream."""

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Iterator
from datetime import datetime
from typing import Any, TypeVar

from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse, StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from games import notifications, selectors, streams
from games.apis.auth import BearerTokenAuthentication, StreamTicketAuthentication, request_player
from games.apis.responses import PlayerApi, response_example
from games.apis.serializers import EVENT_RENDERINGS, EVENT_SERIALIZERS
from games.errors import InvalidTicket
from games.models import Player
from games.shapes import EventView
from games.stream_leases import StreamLease
from kingscorner.api.async_views import AsyncApiView
from kingscorner.api.examples import EXAMPLES
from kingscorner.api.fields import QueryIntegerField, no_body
from kingscorner.api.openapi import EMPTY_BODY, Refusals
from kingscorner.client_address import client_address
from kingscorner.off_loop import read_off_loop

Item = TypeVar("Item")

EVENT_STREAM = "text/event-stream"
# How long a client waits before it reconnects to a stream that ended or broke (the SSE `retry` field, which a
# browser's EventSource follows): after a network drop, or a restart of the stream server behind the proxy;
# and a stream served by a WSGI server ends once it has sent what there is, and is read again this often.
RETRY_MILLISECONDS = 3000


class GameStreamTicketApi(PlayerApi):
    class StreamTicketSerializer(serializers.Serializer[Any]):
        """A ticket that opens your stream of the game, and re-opens it, for hours."""

        ticket = serializers.CharField(
            help_text="Send it as `?ticket=` to GET stream. It names you and the game; it is not your token."
        )
        expires_at = serializers.DateTimeField(help_text="Streams open with it until then.")
        url = serializers.URLField(help_text="The game's stream with the ticket, for `new EventSource(url)`.")

    refusals = Refusals("games_stream_ticket", "not_found", "game_not_found", token="required", body="empty")

    @extend_schema(
        operation_id="games_stream_ticket",
        summary="Get a stream ticket",
        tags=["games"],
        request=EMPTY_BODY,
        parameters=refusals.headers(),
        responses={201: StreamTicketSerializer, **refusals.responses()},
        examples=[response_example("A ticket", "games_stream_ticket_response", 201), *refusals.examples()],
        description="A signed ticket that opens your stream of a game you sit at, for clients that cannot "
        "send the Authorization header, such as a browser's `EventSource`: open `new EventSource(url)`. It "
        "opens and re-opens the stream until `expires_at`, `STREAM_TICKET_SECONDS` (6 hours) from now, so "
        "EventSource's own reconnects with the same URL (after a network drop, or a restart of the stream "
        "server: it waits the stream's `retry`, 3 s) keep working for hours. It names only you and this "
        "game, is never written to the servers' access logs, and dies with the token it was asked for: "
        "rotating your token revokes it (its reconnect gets 401 `invalid_ticket`). After it has expired, "
        "ask for another and open the stream again with `last_event_id` set to the last `id` you got. "
        "A client that can send headers (`fetch()` in a browser too) needs no ticket.",
    )
    def post(self, request: Request, game_id: str) -> Response:
        no_body(request)
        ticket, expires_at = streams.ticket_issue(game_id=game_id, player=request_player(request))
        url = request.build_absolute_uri(reverse("game-stream", args=[game_id]))
        body = {"ticket": ticket, "expires_at": expires_at, "url": f"{url}?ticket={ticket}"}
        return Response(self.StreamTicketSerializer(body).data, status=201)


class _EventStreamRegardless(BaseContentNegotiation):
    """The stream is text/event-stream whatever the client says it accepts (EventSource sends
    `Accept: text/event-stream`); a refusal is problem+json, rendered as JSON."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        return next(iter(parsers), None)

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


# The largest seq a stream may start after (an event's seq is a 32-bit integer column).
_SEQ_MAX = 2**31 - 1


class _LastEventIdField(QueryIntegerField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(min_value=0, max_value=_SEQ_MAX, required=False, **kwargs)


def stream_after(request: Request, query: dict[str, Any]) -> int:
    """The seq a stream starts after: the Last-Event-ID header's (EventSource's reconnect), else the query's
    `last_event_id`, else 0."""
    after: int = query.get("last_event_id", 0)
    header = request.headers.get("Last-Event-ID")
    if header is not None and header.strip():
        value = header.strip()
        plain = _plain_seq(value)
        if plain is not None:
            return plain
        try:
            after = _LastEventIdField().run_validation(value)
        except serializers.ValidationError as error:
            raise serializers.ValidationError({"Last-Event-ID": error.detail}) from None
    return after


def _plain_seq(value: str) -> int | None:
    """A seq written as plain digits within _LastEventIdField's range (what every client sends), as the
    field reads it; None for anything else, which the field itself checks (its errors are the refusal's)."""
    if value.isascii() and value.isdigit():
        seq = int(value)
        if seq <= _SEQ_MAX:
            return seq
    return None


def stream_start_after(request: Request, query_serializer: type[serializers.Serializer[Any]]) -> int:
    """The seq a stream starts after, its query checked by `query_serializer` (whose only field is
    `last_event_id`, a _LastEventIdField). A query that names at most a plain seq is read without building
    the serializer (its fields' copies were a twentieth of a burst of stream opens' CPU); any other is the
    serializer's to check and refuse."""
    value = request.query_params.get("last_event_id")
    plain = None if value is None else _plain_seq(value)
    if value is None or plain is not None:
        return stream_after(request, {} if plain is None else {"last_event_id": plain})
    query = query_serializer(data=request.query_params.dict())
    query.is_valid(raise_exception=True)
    return stream_after(request, query.validated_data)


def _event_message(event: EventView | streams.Heartbeat) -> bytes:
    assert not isinstance(event, streams.Heartbeat)
    data = json.dumps(EVENT_RENDERINGS[event["type"]](event), separators=(",", ":"))
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n".encode()


HEARTBEAT_MESSAGE = b": heartbeat\n\n"
RETRY_MESSAGE = f"retry: {RETRY_MILLISECONDS}\n\n".encode()


async def _rotated(listener: notifications.Listener, player_id: Any, rotated_at: datetime) -> None:
    """Returns once the player's token has been rotated since `rotated_at`: told by the player's channel,
    checked in the database (a channel's waiters are also woken when the subscription comes back)."""
    while True:
        if await listener.wait(3600) and await read_off_loop(
            lambda: Player.objects.filter(pk=player_id, token_rotated_at__gt=rotated_at).exists()
        ):
            return


async def _live(
    game_id: Any, player: Player, seat: int, after: int, lease: StreamLease
) -> AsyncIterator[bytes]:
    """The game's stream held open, within its lease; it ends as `held` says, and when the player leaves
    the seat (the game's own wake-up)."""
    events = streams.game_events_live(game_id=game_id, player_id=player.pk, seat=seat, after=after)
    async for message in held(events, player, lease, _event_message):
        yield message


async def held(
    events: AsyncGenerator[Item, None], player: Player, lease: StreamLease, render: Callable[[Item], bytes]
) -> AsyncIterator[bytes]:
    """A stream held open, within its lease: `retry`, then each item of `events` (a heartbeat as a comment),
    until they end or the player's token is rotated (on any process: the player's channel,
    games/notifications.py)."""
    following: asyncio.Future[Item] | None = None
    try:
        async with notifications.listening(f"{notifications.PLAYER_CHANNEL_KEY}{player.pk}") as woken:
            ended = asyncio.ensure_future(_rotated(woken, player.pk, player.token_rotated_at))
            try:
                yield RETRY_MESSAGE
                while True:
                    following = asyncio.ensure_future(anext(events))
                    await asyncio.wait({following, ended}, return_when=asyncio.FIRST_COMPLETED)
                    if ended.done():
                        return
                    try:
                        item = following.result()
                    except StopAsyncIteration:
                        return
                    following = None
                    yield HEARTBEAT_MESSAGE if isinstance(item, streams.Heartbeat) else render(item)
                    # After the item is sent: no event waits for its stream's lease's round trip.
                    await lease.renew_if_due()
            finally:
                ended.cancel()
    finally:
        if following is not None and not following.done():
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
        await events.aclose()
        await lease.release()


def _now(game_id: Any, player_id: Any, seat: int, after: int) -> Iterator[bytes]:
    yield RETRY_MESSAGE
    for event in streams.game_events_now(game_id=game_id, player_id=player_id, seat=seat, after=after):
        yield _event_message(event)


def _first_event(stream: str) -> dict[str, str]:
    """The first event of a stream as text, as its fields."""
    message = next(part for part in stream.split("\n\n") if part.startswith("id: "))
    return dict(line.split(": ", 1) for line in message.splitlines())


STREAM_EXAMPLE = _first_event(EXAMPLES["games_stream_response"])

# What each event of the stream is (a text/event-stream schema describes one event, as OpenAPI 3.2's
# itemSchema does): its fields as the client's EventSource reads them, all text.
EVENT_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": "^[0-9]+$", "description": "The event's seq: Last-Event-ID."},
        "event": {"type": "string", "enum": list(EVENT_SERIALIZERS), "description": "The event's type."},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "description": "The event as a game view's `events` show it to your seat (a GameEvent), in JSON.",
        },
    },
    "required": ["id", "event", "data"],
}


class GameStreamApi(AsyncApiView):
    authentication_classes = (StreamTicketAuthentication, BearerTokenAuthentication)
    permission_classes = (IsAuthenticated,)
    content_negotiation_class = _EventStreamRegardless

    class GameStreamQuerySerializer(serializers.Serializer[Any]):
        last_event_id = _LastEventIdField(
            help_text="Start after this event seq, for a client that cannot send the Last-Event-ID header; "
            "the header wins when both are sent (EventSource sends it when it reconnects)."
        )

    refusals = Refusals(
        "games_stream",
        "invalid_request",
        "invalid_ticket",
        "not_found",
        "game_not_found",
        "too_many_streams",
        token="required",
        negotiated=False,
    )

    def open(self, request: Request, game_id: Any) -> tuple[Player, int, selectors.StreamStart]:
        """The stream's player, the seq it starts after and where it starts (in the trip that authenticated
        it, under ASGI: AsyncApiView)."""
        after = stream_start_after(request, self.GameStreamQuerySerializer)
        ticket = request.auth
        if isinstance(ticket, streams.StreamTicket) and ticket.game_id != str(game_id):
            raise InvalidTicket("This stream ticket is for another stream (a person's, or another game's).")
        player = request_player(request)
        return player, after, selectors.stream_start(game_id=game_id, player=player, after=after)

    @extend_schema(
        operation_id="games_stream",
        summary="Stream the game's events",
        tags=["games"],
        parameters=[
            GameStreamQuerySerializer,
            OpenApiParameter(
                "Last-Event-ID",
                {"type": "integer", "minimum": 0},
                OpenApiParameter.HEADER,
                description="The `id` of the last event you got: the stream starts after it (0 or none: from "
                "the game's first event). EventSource sends it when it reconnects.",
            ),
            *refusals.headers(),
        ],
        responses={
            (200, EVENT_STREAM): OpenApiResponse(
                response=EVENT_SCHEMA,
                description="Server-Sent Events: each event of the game's log after the one you name, as "
                "your seat may see it (`id:` its seq, `event:` its type, `data:` the event as in a game "
                "view's `events`), then each new one as it happens; a `: heartbeat` comment line when "
                "nothing was sent for 15 seconds. Once the game is over it waits `REMATCH_STREAM_SECONDS` "
                "(120) after its end for a `rematch` event, then ends.",
            ),
            204: OpenApiResponse(
                description="The game is over, you have its last event and no rematch is awaited. "
                "(EventSource stops reconnecting on a 204.)"
            ),
            **refusals.responses(),
        },
        examples=[
            OpenApiExample(
                "The first event of a new game",
                value=STREAM_EXAMPLE,
                response_only=True,
                status_codes=["200"],
                media_type=EVENT_STREAM,
            ),
            *refusals.examples(),
        ],
        description="A live feed of the game for a seated person, as Server-Sent Events, so that no client "
        "has to poll. Every event is read from the game's log as your seat may see it (others' draws "
        "without their card), so the stream is complete: reconnect with the last `id` you got "
        "(`Last-Event-ID`, or `last_event_id`) and nothing is missed or sent twice. Authenticate with "
        "`Authorization: Bearer <token>`, or, from a browser's EventSource, with `?ticket=` from POST "
        "stream-tickets (never put your token in a URL). A stream served by a WSGI server (gunicorn) "
        "sends what there is and ends, and the client reconnects after its `retry`; the ASGI server "
        "(uvicorn, `kingscorner.asgi`) holds it open. At most `STREAMS_PER_PLAYER` (8) streams are open "
        "for one player and `STREAMS_PER_ADDRESS` (32) from one client address, on every server together: "
        "the next is refused with 429 `too_many_streams` and `Retry-After` (a stream's slot is freed when it "
        "ends, or at the latest 45 s after its server stopped renewing it).",
    )
    async def get(self, request: Request, game_id: Any) -> HttpResponse | StreamingHttpResponse:
        player, after, start = self.opened()
        if start.done:
            return HttpResponse(status=204)
        content: AsyncIterator[bytes] | Iterator[bytes]
        lease = StreamLease(player_id=player.pk, address=client_address(request._request))
        if isinstance(request._request, ASGIRequest):
            await lease.take()
            content = _live(game_id, player, start.seat, after, lease)
        else:
            # A WSGI server's stream ends at once: it must fit under the caps, and holds no slot.
            await lease.check()
            content = _now(game_id, player.pk, start.seat, after)
        response = StreamingHttpResponse(content, content_type=EVENT_STREAM)
        response["Cache-Control"] = "no-cache"
        # Proxies pass each event on as it comes (nginx's location for streams says so too).
        response["X-Accel-Buffering"] = "no"
        return response
