"""Errors the engine raises: each carries a machine-readable code and a sentence for people."""


class EngineError(ValueError):
    """A refusal by the engine; nothing was changed."""

    code: str

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class CardError(EngineError):
    """A card code that cannot be read."""


class RulesError(EngineError):
    """A rule set or option that does not exist or does not make sense."""


class MoveError(EngineError):
    """A move that is malformed or not allowed in the current state."""
