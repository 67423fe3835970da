"""The servers' access logs without stream tickets: a ticket in a URL (`?ticket=`, which a browser's
EventSource sends on every reconnect) opens its player's streams for hours, so uvicorn's and gunicorn's
access logs write `ticket=[redacted]` in its place, whatever the path."""

import logging
import re
from typing import Any
from urllib.parse import unquote_plus

from gunicorn.glogging import Logger

REDACTED = "[redacted]"
SECRET_PARAMETERS = frozenset({"ticket"})

# A query parameter anywhere in a line of text: a path with its query, a request line, a Referer.
_PARAMETER = re.compile(r"(?P<head>[?&;](?P<name>[^=&;\s\"#?]*)=)(?P<value>[^&;\s\"#]*)")


def redacted(text: str) -> str:
    """`text` with the value of every secret query parameter replaced (its name as a client may encode it,
    `%74icket` too, for the server reads it decoded)."""
    if "=" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        if unquote_plus(match.group("name")).lower() in SECRET_PARAMETERS:
            return match.group("head") + REDACTED
        return match.group(0)

    return _PARAMETER.sub(replace, text)


class TicketRedactingFilter(logging.Filter):
    """On uvicorn's access logger (`uvicorn.access`), whose record's arguments are the client, the method,
    the path with its query, the HTTP version and the status."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redacted(arg) if isinstance(arg, str) else arg for arg in record.args)
        return True


def uvicorn_access_log_redact() -> None:
    """Installs the filter on uvicorn's access logger, in the process that serves the ASGI application (a
    logger's filter applies whatever handlers uvicorn's log configuration gave it)."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(each, TicketRedactingFilter) for each in access.filters):
        access.addFilter(TicketRedactingFilter())


class TicketRedactingLogger(Logger):  # type: ignore[misc]  # gunicorn ships no types
    """Gunicorn's logger (`logger_class` in kingscorner/gunicorn_conf.py): every atom of its access log
    format (the request line, the query, the Referer, environ and header values) is redacted."""

    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        atoms: dict[str, Any] = super().atoms(resp, req, environ, request_time)
        return {name: redacted(value) if isinstance(value, str) else value for name, value in atoms.items()}
