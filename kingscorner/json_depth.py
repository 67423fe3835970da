"""JSON read with a bound on how deeply arrays and objects nest, for every JSON the API reads from a client:
Python's parser recurses once per level and fails past its recursion limit, and nothing the API takes nests
more than a few levels."""

import json
from typing import Any

MAX_JSON_DEPTH = 32


class JsonTooDeep(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nested more than {limit} levels deep.")


def check_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """Raises JsonTooDeep when `value` nests arrays and objects more than `limit` deep (a scalar is 0 deep,
    `[]` and `{}` 1). Iterative, so that no value, however deep, costs the interpreter's stack."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            raise JsonTooDeep(limit)
        pending.extend((child, depth + 1) for child in children)


def loads(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> Any:
    """json.loads, refusing JSON nested more than `limit` deep with JsonTooDeep (a ValueError, as any JSON
    that cannot be read), never a RecursionError."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonTooDeep(limit) from None
    check_depth(value, limit)
    return value
