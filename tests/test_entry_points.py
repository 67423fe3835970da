"""The two applications the servers load: `kingscorner.wsgi` (gunicorn) and `kingscorner.asgi` (uvicorn),
called here in this process as their servers call them."""

import asyncio
import gc
import io
from collections.abc import Mapping
from typing import Any

import pytest

from kingscorner import off_loop


def test_the_wsgi_application_serves_the_api(db: None) -> None:
    from kingscorner.wsgi import application

    said: list[Any] = []
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/api/v1/health",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "HTTP_HOST": "testserver",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
    }

    def start_response(status: str, headers: list[tuple[str, str]], *_: Any) -> Any:
        said.append((status, headers))
        return lambda data: None

    body = b"".join(application(environ, start_response))
    status, headers = said[0]
    assert status.split()[0] == "200", body
    assert dict(headers)["API-Version"]
    assert b'"status"' in body


async def _handled(
    handle: Any, scope: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], BaseException | None]:
    from kingscorner.asgi import application

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(3600)
        return {}

    original = application._handle_stream
    application._handle_stream = handle  # type: ignore[method-assign]
    try:
        await application._stream(dict(scope), receive, send)
    except BaseException as error:  # noqa: BLE001 - what the server would see
        return sent, error
    finally:
        application._handle_stream = original  # type: ignore[method-assign]
    return sent, None


STREAM_SCOPE = {"type": "http", "path": "/api/v1/players/me/stream", "method": "GET", "headers": []}


def test_a_stream_cancelled_by_the_servers_shutdown_ends_as_a_stream_does() -> None:
    async def streaming(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"retry: 3000\n\n", "more_body": True})
        raise asyncio.CancelledError

    sent, error = asyncio.run(_handled(streaming, STREAM_SCOPE))
    assert error is None
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


def test_a_stream_cancelled_before_it_started_or_after_it_ended_is_cancelled() -> None:
    async def not_started(scope: Any, receive: Any, send: Any) -> None:
        raise asyncio.CancelledError

    async def ended(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        raise asyncio.CancelledError

    for handle, count in ((not_started, 0), (ended, 2)):
        sent, error = asyncio.run(_handled(handle, STREAM_SCOPE))
        assert isinstance(error, asyncio.CancelledError) and len(sent) == count


def test_the_lifespan_sets_the_server_loop_and_clears_it_at_shutdown(monkeypatch: pytest.MonkeyPatch) -> None:
    from kingscorner import asgi
    from kingscorner.scheduler import scheduler

    monkeypatch.setattr(scheduler, "start", lambda: None)
    monkeypatch.setattr(scheduler, "stop", lambda: None)

    async def lifespan() -> tuple[list[str], list[bool]]:
        messages = asyncio.Queue[dict[str, Any]]()
        for kind in ("lifespan.startup", "lifespan.shutdown"):
            messages.put_nowait({"type": kind})
        sent: list[str] = []
        loop_set: list[bool] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message["type"])
            loop_set.append(off_loop._server_loop is asyncio.get_running_loop())

        await asgi.application({"type": "lifespan"}, messages.get, send)
        return sent, loop_set

    try:
        sent, loop_set = asyncio.run(lifespan())
    finally:
        off_loop.server_loop_set(None)
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert loop_set == [True, False]


def test_the_servers_collector_is_tuned_on_its_main_thread_and_an_embedding_programs_left_alone() -> None:
    import threading

    from kingscorner.asgi import GC_THRESHOLDS, garbage_collection_tune

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        embedded = threading.Thread(target=garbage_collection_tune)
        embedded.start()
        embedded.join()
        assert gc.get_threshold() == (700, 10, 10)
        garbage_collection_tune()
        assert gc.get_threshold() == GC_THRESHOLDS
    finally:
        gc.set_threshold(*before)
