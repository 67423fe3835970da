"""The base of every error raised below the API views: it knows nothing of HTTP, only its stable `code`."""

from collections.abc import Mapping
from typing import Any


class DomainError(Exception):
    """A refusal by a service, selector, hook or shared API helper. Each subclass names its `code`; the API
    layer's registry (kingscorner.api.problems) decides the status a client gets for it. `members` are extra
    facts for the client (plain JSON data), such as the index of a refused move."""

    # A class attribute; an error that passes on the engine's reason (MoveRefused) sets it per instance.
    code: str

    def __init__(self, detail: str, *, members: Mapping[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.members: dict[str, Any] = dict(members or {})
