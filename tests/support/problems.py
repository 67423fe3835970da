"""The check every test makes of a refusal: an RFC 9457 problem+json response with its status and code."""

import json
from typing import Any

PROBLEM = "application/problem+json"


def assert_problem(response: Any, status: int, code: str) -> dict[str, Any]:
    """Asserts that `response` is the whole, well-formed problem `code` with `status`; returns its body."""
    assert (response.status_code, response["Content-Type"]) == (status, PROBLEM), response.content
    body: dict[str, Any] = json.loads(response.content)
    assert (body["status"], body["code"]) == (status, code), body
    assert body["type"] == f"https://kingscorner.example/problems/{code}"
    assert body["title"] and isinstance(body["detail"], str)
    return body
