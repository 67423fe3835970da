"""The base of every error raised below the API views: it knows nothing of HTTP, only its stable `code`; and
the other refusals the API answers as it answers a DomainError (an app registers them, so that the API's
error handler imports no app)."""

from collections.abc import Mapping
from typing import Any, Protocol, cast


class DomainError(Exception):
    """A refusal by a service, selector, hook or shared API helper. Each subclass names its `code`; the API
    layer's registry (kingscorner.api.problems) decides the status a client gets for it. `members` are extra
    facts for the client (JSON data; a time may be a datetime, which the renderer writes), such as the index
    of a refused move; `headers` are facts that go
    in response headers, such as the version a conflict found the game at (its ETag)."""

    # A class attribute; an error that passes on the engine's reason (MoveRefused) sets it per instance.
    code: str

    def __init__(
        self,
        detail: str,
        *,
        members: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.members: dict[str, Any] = dict(members or {})
        self.headers: dict[str, str] = dict(headers or {})


class Refusal(Protocol):
    """What a refusal that is no DomainError (the engine's, which imports nothing of the project) has."""

    code: str
    detail: str


# Exception classes other than DomainError whose instances are refusals (Refusal), answered with their code.
_refusal_types: list[type[Exception]] = []


def refusal_type_register(error_type: type[Exception]) -> None:
    """Registers a class of refusals (an app's AppConfig.ready does, for the errors of a layer below it)."""
    if error_type not in _refusal_types:
        _refusal_types.append(error_type)


def refusal_of(exc: BaseException) -> Refusal | None:
    """`exc` as a refusal of a registered class, or None."""
    return cast(Refusal, exc) if isinstance(exc, tuple(_refusal_types)) else None
