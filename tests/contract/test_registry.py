"""The registry of problem codes is complete and exact: every code raised anywhere in the code base (or
answered by gunicorn or nginx before Django) is in it, every entry is raised somewhere, and each renders with
its status: through the exception handler, or as gunicorn's and nginx's own problem pages."""

import ast
import http.client
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest
from django.http.response import HttpResponseBase
from django.test import RequestFactory
from gunicorn import util
from rest_framework import exceptions

from games.engine import EngineError
from games.errors import MoveRefused, VersionConflict
from games.stream_leases import TooManyStreams
from kingscorner import gunicorn_conf
from kingscorner.api import errors
from kingscorner.api.problems import PROBLEMS, STATUS_RULE, problem
from kingscorner.api.renderers import JSONRenderer
from kingscorner.domain import DomainError

PROJECT = Path(__file__).resolve().parents[2]
SOURCES = [
    path
    for package in ("games", "daily", "kingscorner")
    for path in sorted((PROJECT / package).rglob("*.py"))
    if "migrations" not in path.parts
]
NGINX_TEMPLATE = PROJECT / "deploy" / "nginx.conf.template"
CODE = re.compile(r"^[a-z]+(?:_[a-z]+)*$")
# Constructors whose first argument is a code: the engine's errors and the domain errors that pass one on.
CODE_TAKERS = {"EngineError", "MoveError", "CardError", "RulesError", "ImpossiblePosition"}


def _literal(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.match(node.value):
        return node.value
    return None


def codes_in_source(tree: ast.AST) -> set[str]:
    """The codes a module can raise: `code = "..."` in a class, `code="..."` passed to a call, the first
    argument of an error that takes its code, a refusal returned as ("code", ...), and the values of the
    handler's table of DRF exceptions, and gunicorn's table of its refusals."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, ast.Assign) and [
                    getattr(t, "id", None) for t in statement.targets
                ] == ["code"]:
                    found.add(_literal(statement.value) or "")
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name in CODE_TAKERS and node.args:
                found.add(_literal(node.args[0]) or "")
            # A ValidationError's code is DRF's name for the failed check; the client gets invalid_request.
            if name != "ValidationError":
                found.update(_literal(kw.value) or "" for kw in node.keywords if kw.arg == "code")
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and node.value.elts:
            found.add(_literal(node.value.elts[0]) or "")
        elif isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) in (
            "DRF_CODES",
            "_PROBLEM_CODES",
        ):
            assert isinstance(node.value, ast.Dict)
            found.update(_literal(value) or "" for value in node.value.values)
    return found - {""}


def nginx_pages() -> dict[str, tuple[int, dict[str, Any]]]:
    """code -> (status, body) of each problem page nginx answers with itself (deploy/nginx.conf.template)."""
    pages: dict[str, tuple[int, dict[str, Any]]] = {}
    for status, body in re.findall(r"return (\d+) '(\{.*\})';", NGINX_TEMPLATE.read_text()):
        document = json.loads(body.replace("${MAX_BODY_BYTES}", "65536"))
        pages[document["code"]] = (int(status), document)
    return pages


def raised_codes() -> dict[str, set[str]]:
    by_module: dict[str, set[str]] = {}
    for path in SOURCES:
        codes = codes_in_source(ast.parse(path.read_text(), filename=str(path)))
        if codes:
            by_module[str(path.relative_to(PROJECT))] = codes
    by_module[str(NGINX_TEMPLATE.relative_to(PROJECT))] = set(nginx_pages())
    return by_module


def test_every_code_raised_in_the_code_base_is_in_the_registry() -> None:
    missing = {
        module: codes - set(PROBLEMS) for module, codes in raised_codes().items() if codes - set(PROBLEMS)
    }
    assert missing == {}


def test_every_code_in_the_registry_is_raised_somewhere() -> None:
    raised = set().union(*raised_codes().values())
    assert set(PROBLEMS) - raised == set()


def test_the_scan_finds_each_way_a_code_is_raised() -> None:
    source = """
class Refused(DomainError):
    code = "from_a_class"

def refusal():
    raise MoveError("from_the_engine", "detail")

def other():
    return "from_a_refusal", "detail"

problem_response(code="from_a_keyword", detail="x")
"""
    assert codes_in_source(ast.parse(source)) == {
        "from_a_class",
        "from_the_engine",
        "from_a_refusal",
        "from_a_keyword",
    }


def test_every_status_in_the_registry_follows_the_documented_rule() -> None:
    for code, entry in PROBLEMS.items():
        assert entry.status in STATUS_RULE or entry.status in (405, 406, 500, 502), code
        assert entry.title and entry.meaning.endswith("."), code


def _domain_error(code: str) -> Exception:
    """An error of the code base that carries `code`: its domain error class, else the engine's error."""
    if code == "version_conflict":
        return VersionConflict(version=4, expected=3, current={"version": 4})
    if code == "too_many_streams":
        return TooManyStreams("A too_many_streams.", retry_after=3)
    classes = [cls for cls in _subclasses(DomainError) if cls.__dict__.get("code") == code]
    if classes:
        error: DomainError = Exception.__new__(classes[0])
        DomainError.__init__(error, f"A {code}.")
        return error
    return EngineError(code, f"A {code}.")


def _subclasses(cls: type) -> list[type]:
    return [sub for direct in cls.__subclasses__() for sub in (direct, *_subclasses(direct))]


DRF_ERRORS: dict[str, Exception] = {
    "malformed_json": exceptions.ParseError(),
    "not_authenticated": exceptions.NotAuthenticated(),
    "invalid_token": exceptions.AuthenticationFailed(),
    "not_found": exceptions.NotFound(),
    "method_not_allowed": exceptions.MethodNotAllowed("DELETE"),
    "not_acceptable": exceptions.NotAcceptable(),
    "unsupported_media_type": exceptions.UnsupportedMediaType("text/plain"),
    "rate_limited": exceptions.Throttled(wait=2.5),
    "invalid_request": exceptions.ValidationError({"name": ["This field is required."]}),
}
# Codes only Django's own error handlers answer with, outside DRF's views.
DJANGO_HANDLERS: dict[str, Callable[[HttpRequest], HttpResponseBase]] = {
    "server_error": errors.server_error,
}


# Codes only gunicorn and nginx answer with, before Django: their pages are checked below.
BEFORE_DJANGO = {"malformed_request", "headers_too_large", "bad_gateway"}


def test_the_codes_answered_before_django_are_gunicorns_and_nginxs() -> None:
    assert set(gunicorn_conf._PROBLEM_CODES.values()) | set(nginx_pages()) >= BEFORE_DJANGO


@pytest.mark.parametrize("status", [*sorted(gunicorn_conf._PROBLEM_CODES), 500])
def test_gunicorns_refusals_carry_a_registered_code_with_its_registry_status(
    status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[bytes] = []
    monkeypatch.setattr(util, "write_nonblock", lambda sock, data: written.append(data))
    gunicorn_conf._write_problem(None, status, "Reason", "What gunicorn says.")

    class Sock:
        def makefile(self, *args: Any) -> io.BytesIO:
            return io.BytesIO(b"".join(written))

    response = http.client.HTTPResponse(Sock())  # type: ignore[arg-type]
    response.begin()
    body = json.loads(response.read())
    entry = problem(body["code"])
    assert (response.status, response.getheader("Content-Type")) == (
        entry.status,
        errors.PROBLEM_CONTENT_TYPE,
    )
    assert (body["status"], body["title"], body["detail"]) == (
        entry.status,
        entry.title,
        "What gunicorn says.",
    )
    assert body["type"] == errors.PROBLEM_TYPE_BASE + body["code"]
    # Every refusal is a 4xx; only a failure (gunicorn's 500) is a 5xx.
    assert (entry.status >= 500) == (status == 500)


@pytest.mark.parametrize("code", sorted(nginx_pages()))
def test_nginxs_pages_carry_a_registered_code_with_its_registry_status(code: str) -> None:
    status, body = nginx_pages()[code]
    entry = problem(code)
    assert (status, body["status"], body["title"]) == (entry.status, entry.status, entry.title)
    assert body["type"] == errors.PROBLEM_TYPE_BASE + code


@pytest.mark.parametrize("code", sorted(set(PROBLEMS) - BEFORE_DJANGO))
def test_every_registry_entry_renders_through_the_handler_with_its_status(code: str) -> None:
    entry = PROBLEMS[code]
    if code in DJANGO_HANDLERS:
        response: Any = DJANGO_HANDLERS[code](RequestFactory().get("/somewhere"))
    else:
        response = errors.problem_exception_handler(DRF_ERRORS.get(code) or _domain_error(code), {})
        response.accepted_renderer = JSONRenderer()
        response.accepted_media_type = errors.PROBLEM_CONTENT_TYPE
        response.renderer_context = {}
        response.render()
    body = json.loads(response.content)
    assert (response.status_code, response["Content-Type"]) == (entry.status, errors.PROBLEM_CONTENT_TYPE)
    assert body["code"] == code and body["status"] == entry.status and body["title"] == entry.title
    assert body["type"] == errors.PROBLEM_TYPE_BASE + code
    if entry.status == 401:
        assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    if entry.status == 429:
        assert response["Retry-After"] == "3"


def test_django_errors_map_to_their_codes() -> None:
    for error, code in (
        (Http404(), "not_found"),
        (RequestDataTooBig(), "body_too_large"),
    ):
        response = errors.problem_exception_handler(error, {})
        assert response is not None and response.data["code"] == code


def test_a_version_conflict_carries_the_game_and_its_etag() -> None:
    response = errors.problem_exception_handler(
        VersionConflict(version=4, expected=3, current={"version": 4}), {}
    )
    assert response is not None
    assert response["ETag"] == '"4"' and response.data["current"] == {"version": 4}


def test_a_refused_move_carries_the_engines_code_and_its_index() -> None:
    refusal = MoveRefused(EngineError("does_not_fit", "5H does not fit on 9S."), index=2)
    response = errors.problem_exception_handler(refusal, {})
    assert response is not None and response.status_code == 422
    assert (response.data["code"], response.data["move_index"]) == ("does_not_fit", 2)


def test_an_error_that_is_not_the_clients_is_left_to_django() -> None:
    assert errors.problem_exception_handler(KeyError("a bug"), {}) is None
