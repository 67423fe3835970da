"""The ASGI application that uvicorn serves: `uvicorn kingscorner.asgi:application`. It serves the whole
API, and it is the one that holds event streams (GET /api/v1/games/{id}/stream, GET /api/v1/players/me/stream)
open: under WSGI a stream sends what there is and ends."""

import asyncio
import os
import re
import warnings
from collections.abc import Mapping
from typing import Any

import django
from django.core.handlers.asgi import ASGIHandler

from kingscorner.access_log import uvicorn_access_log_redact
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
    - The ASGI lifespan protocol starts and stops the in-process scheduler (kingscorner/scheduler.py), which
      runs beat's schedule and the delayed tasks when there is no broker (the quick start) and is off
      otherwise.
    """

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    scheduler.start()
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await asyncio.to_thread(scheduler.stop)
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
            await self.handle(scope, receive, sending)
        except asyncio.CancelledError:
            # uvicorn cancels the streams still open when its graceful shutdown runs out: each ends as a
            # stream does, and its client reconnects, with the last id it got, to a server that is up.
            if started and not completed:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            raise


application = KingsCornerASGIHandler()
