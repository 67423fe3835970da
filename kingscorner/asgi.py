"""The ASGI application that uvicorn serves: `uvicorn kingscorner.asgi:application`. It serves the whole
API, and it is the one that holds event streams (GET /api/v1/games/{id}/stream, GET /api/v1/players/me/stream)
open: under WSGI a stream sends what there is and ends."""

import asyncio
import gc
import os
import re
import threading
import warnings
from collections.abc import Mapping
from contextlib import suppress
from typing import Any

import django
from asgiref.sync import SyncToAsync, sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.signals import request_finished
from django.db import close_old_connections, connections, reset_queries
from django.dispatch import Signal
from django.urls import set_script_prefix

from kingscorner.access_log import uvicorn_access_log_redact
from kingscorner.off_loop import server_loop_set
from kingscorner.scheduler import scheduler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kingscorner.settings")
django.setup(set_prefix=False)

# Django's middleware modules read the app registry as they are imported.
from kingscorner.middleware import EVENT_STREAM_SCOPE  # noqa: E402

# A stream ticket in a URL is never written to uvicorn's access log.
uvicorn_access_log_redact()

# Static files (the docs page's) are files read in a thread, which is as it should be: Django's warning that
# it iterates them synchronously says nothing an operator can act on.
warnings.filterwarnings(
    "ignore", message="StreamingHttpResponse must consume synchronous iterators", category=Warning
)

# The cyclic garbage collector's thresholds in the ASGI server's process (Python's are 700, 10, 10). Its open
# streams keep their objects alive for as long as they are open, and a full collection walks every one of
# them while every stream of the process waits: with 2,500 streams open the default thresholds ran a full
# collection every few seconds, each taking 0.2 to 1.3 s (bench/streams.py; docs/scaling.md). The young
# generation is collected about 30 times less often, so that a request's or a read's objects mostly die young
# instead of being promoted (where only a full collection frees them), and a full collection waits for 50 of
# the middle generation's instead of 10 (and, as always, for the objects promoted since the last one to
# reach a quarter of those it kept).
GC_THRESHOLDS = (20_000, 10, 50)


def garbage_collection_tune() -> None:
    """At the server's start, GC_THRESHOLDS: in a process whose server runs on its main thread (uvicorn's),
    not in a program that embeds the server on a thread of its own (a test's), whose collector is its own."""
    if threading.current_thread() is threading.main_thread():
        gc.set_threshold(*GC_THRESHOLDS)


def _request_thread_connections_close(sender: Any, **kwargs: Any) -> None:
    """At the end of a request that had a thread of its own (Django gives each request but a stream one, and
    it ends with the request): that thread's database connections are closed now. Kept for CONN_MAX_AGE,
    they would serve no other request, and would be closed only when the garbage collector next reached
    them (a connection's objects refer to each other), so that a busy process held one for each request
    since, and PostgreSQL ran out of connections."""
    if SyncToAsync.thread_sensitive_context.get(None) is not None:
        connections.close_all()


request_finished.connect(_request_thread_connections_close, dispatch_uid="kingscorner.asgi.connections")

# The event streams: a game's, and the person stream.
STREAM_PATH = re.compile(r"^/api/v1/(games/[^/]+|players/me)/stream$")


class KingsCornerASGIHandler(ASGIHandler):
    """Django's ASGI handler, with these differences:

    - An event stream is served outside a thread-sensitive context of its own. Django gives each request
      one, and with it a thread that lives as long as the request, which for a stream is as long as it is
      open. The few synchronous steps of a stream (Django's signals, the synchronous middleware, the checks
      before it starts) run instead on the process's one shared thread for such work, and its reads of the
      event log on the stream readers' threads (games/streams.py): an open stream holds no thread.
    - A stream still open when uvicorn's graceful shutdown runs out ends as a stream does, rather than with an
      error.
    - At the lifespan's startup the garbage collector is tuned for many long-lived streams
      (garbage_collection_tune).
    - The ASGI lifespan protocol starts and stops the in-process scheduler (kingscorner/scheduler.py), which
      runs beat's schedule and the delayed tasks when there is no broker (the quick start) and is off
      otherwise.
    """

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    garbage_collection_tune()
                    server_loop_set(asyncio.get_running_loop())
                    scheduler.start()
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await asyncio.to_thread(scheduler.stop)
                    server_loop_set(None)
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] == "http" and STREAM_PATH.match(scope.get("path", "")):
            await self._stream({**scope, EVENT_STREAM_SCOPE: True}, receive, send)
            return
        await super().__call__(scope, receive, send)

    async def _stream(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        started = completed = False

        async def sending(message: Mapping[str, Any]) -> None:
            nonlocal started, completed
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                completed = True
            await send(message)

        try:
            await self._handle_stream(scope, receive, sending)
        except asyncio.CancelledError:
            # uvicorn cancels the streams still open when its graceful shutdown runs out: each ends as a
            # stream does, and its client reconnects, with the last id it got, to a server that is up.
            if started and not completed:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            raise

    async def _handle_stream(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Django's ASGIHandler.handle (Django 5.2's, line for line), for an event stream, with its
        `request_started` and `request_finished` signals sent on the event loop (`_on_the_loop`) rather than
        through a thread-sensitive sync_to_async: on the one thread asgiref keeps for such work, which every
        stream open of the process took its turn on, one after another."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        await _on_the_loop(signals.request_started, sender=self.__class__, scope=scope)
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            assert error_response is not None
            body_file.close()
            await self.send_response(error_response, send)
            await sync_to_async(error_response.close)()
            return

        async def process_request(request: Any, send: Any) -> Any:
            response = await self.run_get_response(request)
            try:
                await self.send_response(response, send)
            except asyncio.CancelledError:
                pass
            return response

        tasks = [
            asyncio.create_task(self.listen_for_disconnect(receive)),
            asyncio.create_task(process_request(request, send)),
        ]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            if task.done():
                try:
                    task.result()
                except RequestAborted:
                    pass
                except AssertionError:
                    body_file.close()
                    raise
            else:
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass
        try:
            response = tasks[1].result()
        except asyncio.CancelledError:
            await _on_the_loop(signals.request_finished, sender=self.__class__)
        else:
            # Django's response.close, with its request_finished sent as request_started was.
            for closer in response._resource_closers:
                with suppress(Exception):
                    closer()
            response._resource_closers.clear()
            response.closed = True
            await _on_the_loop(signals.request_finished, sender=response._handler_class)
        body_file.close()


# Django's receivers of the request signals that reset the calling thread's queries log and close its old
# database connections: a stream's loop has neither (its reads run on the reader threads, kingscorner/
# off_loop.py, which look after their connections themselves), and there they cost a third of a
# millisecond each time (asgiref's locals on the loop), a fifth of a burst of opens.
_NOT_ON_THE_LOOP = frozenset({reset_queries, close_old_connections})


async def _on_the_loop(signal: Signal, **named: Any) -> None:
    """Sends a request signal of a stream on the loop: its synchronous receivers called there (but
    _NOT_ON_THE_LOOP), its coroutines awaited."""
    synchronous, asynchronous = signal._live_receivers(named["sender"])
    for receiver in synchronous:
        if receiver not in _NOT_ON_THE_LOOP:
            receiver(signal=signal, **named)
    if asynchronous:
        await asyncio.gather(*(receiver(signal=signal, **named) for receiver in asynchronous))


application = KingsCornerASGIHandler()
