"""What the OpenAPI schema says of errors and headers: each operation's problem responses, generated from the
registry of problem codes, with the response headers the API sends."""

import copy
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any, Literal

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from kingscorner.api.errors import PROBLEM_CONTENT_TYPE
from kingscorner.api.problems import PROBLEM_TYPE_BASE, PROBLEMS, STATUS_RULE, problem

TokenUse = Literal["none", "optional", "required"]
BodyUse = Literal["none", "ignored", "empty", "json"]

# The codes every operation can answer with because gunicorn (or nginx in front) cannot read the request,
# before Django sees it: an over-long request line (a long query string), an over-large header. The Django
# test client cannot send these; tests/e2e/test_topology.py drives them through a live gunicorn.
TRANSPORT_CODES = ("malformed_request", "headers_too_large")
# Every URL answers a method it does not take with 405 and the Allow header, so every operation lists it.
ROUTING_CODES = ("method_not_allowed",)
# Every operation that negotiates its answer's media type (all but the streams and the rules document, which
# answer in theirs whatever the Accept header says) refuses an Accept or a `?format=` it cannot answer.
NEGOTIATION_CODES = ("not_acceptable",)

# The codes an operation can answer with because of how it takes its token, its body and its rate.
TOKEN_CODES: dict[TokenUse, tuple[str, ...]] = {
    "none": (),
    "optional": ("invalid_token",),
    "required": ("not_authenticated", "invalid_token"),
}
BODY_CODES: dict[BodyUse, tuple[str, ...]] = {
    "none": (),
    # A POST without a body still has its size and length checked before the view.
    "ignored": ("length_required", "body_too_large"),
    "json": (
        "malformed_json",
        "json_too_deep",
        "invalid_request",
        "length_required",
        "body_too_large",
        "unsupported_media_type",
    ),
}
# A POST that takes no body refuses any but none or `{}` (kingscorner.api.fields.no_body), as it refuses a
# body that is not JSON: the codes of a JSON body.
BODY_CODES["empty"] = BODY_CODES["json"]
# Its request in the schema, and the example that shows it.
EMPTY_BODY_SCHEMA = {"type": "object", "maxProperties": 0, "description": "Nothing, or `{}`."}
EMPTY_BODY = {"application/json": EMPTY_BODY_SCHEMA}
EMPTY_BODY_EXAMPLE = OpenApiExample("No body, or nothing in one", value={}, request_only=True)
# What the description of each such operation says of it.
NO_BODY = "No body, or `{}`: any other is refused (400) and changes nothing."


class ProblemCodeField(serializers.CharField):
    """A problem's `code`: in the schema, the enum of the codes one response can carry, each explained."""

    def __init__(self, codes: Iterable[str], **kwargs: Any) -> None:
        self.codes = tuple(codes)
        super().__init__(**kwargs)


# The names drf-spectacular gives each operation's problem serializers: postprocess_schema folds each into the
# one shared Problem schema, narrowed where it is used (see _shared_problem).
OPERATION_PROBLEMS: set[str] = set()
PROBLEM_REF = "#/components/schemas/Problem"
# The members every problem has, in the shared Problem schema.
PROBLEM_MEMBERS = ("type", "title", "status", "detail", "code")


class ProblemCodeFieldExtension(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    target_class = ProblemCodeField

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        # Each code's meaning is in the response's description, beside its status rule.
        return {"type": "string", "enum": list(self.target.codes)}


class StatusField(serializers.IntegerField):
    """A problem's `status`: in the schema, the one status its response has."""

    def __init__(self, status: int, **kwargs: Any) -> None:
        self.status = status
        super().__init__(**kwargs)


class StatusFieldExtension(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    target_class = StatusField

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        return {"type": "integer", "enum": [self.target.status], "description": "The HTTP status."}


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _phrase(status: int) -> str:
    return "".join(word.capitalize() for word in HTTPStatus(status).phrase.replace("-", " ").split())


# The details the API really sends for the codes every operation shares.
SHARED_EXAMPLE_DETAILS = {
    "invalid_request": "The request is not valid; see `errors`.",
    "method_not_allowed": 'Method "PUT" not allowed.',
    "not_acceptable": "Could not satisfy the request Accept header.",
    "malformed_json": "JSON parse error - Expecting value: line 1 column 1 (char 0)",
    "unsupported_media_type": 'Unsupported media type "text/plain" in request.',
    "body_too_large": "The request body is larger than 65536 bytes.",
    "not_authenticated": "Authentication credentials were not provided.",
    "invalid_token": "The token is not valid; it may have been replaced.",
    "rate_limited": "Request was throttled. Expected available in 42 seconds.",
    "database_unavailable": "The database does not answer; try again in a few seconds.",
    "length_required": "Send the body with a Content-Length header, not in chunks.",
    "json_too_deep": "The body nests arrays and objects more than 32 levels deep.",
    "malformed_request": "Request Line is too large (5000 > 4094)",
    "headers_too_large": "Error parsing headers: 'limit request headers fields size'",
}


def _example_members(code: str, members: Mapping[str, Any]) -> dict[str, Any]:
    if code == "invalid_request":
        return {"errors": {"name": ["This field is required."]}}
    return dict(members)


class Refusals:
    """The problem codes one operation can answer with: those it names, and those that follow from how it
    takes its token (`token`), its body (`body`), whether it is rate-limited and whether it reads the
    database (`database`; by default when it reads a token, which is looked up there) and whether it
    negotiates its answer's media type (`negotiated`: 406 `not_acceptable`). Its `responses` and
    `examples` document them, grouped by status, each code with its meaning from the registry.

    `members` adds problem members to the codes that carry them: code -> {member name: field}.
    `example_members` gives those members' values in the examples: code -> {member name: value}.
    `meanings` words a code's meaning for this operation where the registry's wording names another one's
    (the same code and status, said of this operation): code -> meaning."""

    def __init__(
        self,
        operation_id: str,
        *codes: str,
        token: TokenUse,
        body: BodyUse = "none",
        throttled: bool = True,
        database: bool | None = None,
        negotiated: bool = True,
        members: Mapping[str, Mapping[str, serializers.Field[Any, Any, Any, Any]]] | None = None,
        example_members: Mapping[str, Mapping[str, Any]] | None = None,
        example_details: Mapping[str, str] | None = None,
        meanings: Mapping[str, str] | None = None,
    ) -> None:
        self.operation_id = operation_id
        self.body = body
        if database is None:
            database = token != "none"
        generic = (
            *TRANSPORT_CODES,
            *ROUTING_CODES,
            *(NEGOTIATION_CODES if negotiated else ()),
            *TOKEN_CODES[token],
            *BODY_CODES[body],
            *(("rate_limited",) if throttled else ()),
            *(("database_unavailable",) if database else ()),
        )
        self.codes: tuple[str, ...] = tuple(dict.fromkeys((*codes, *generic)))
        # The codes particular to the operation: those named, the others following from how it is called.
        self.named = frozenset(codes)
        for code in self.codes:
            problem(code)  # every code is in the registry
        self.members = dict(members or {})
        self.example_members = dict(example_members or {})
        self.example_details = dict(example_details or {})
        self.meanings = dict(meanings or {})
        assert set(self.meanings) <= self.named, "a meaning for a code the operation does not name"

    def meaning(self, code: str) -> str:
        return self.meanings.get(code, problem(code).meaning)

    def by_status(self) -> dict[int, list[str]]:
        statuses: dict[int, list[str]] = {}
        for code in self.codes:
            statuses.setdefault(problem(code).status, []).append(code)
        return dict(sorted(statuses.items()))

    def _serializer(self, status: int, codes: list[str]) -> type[serializers.Serializer[Any]]:
        fields: dict[str, Any] = {
            "type": serializers.URLField(help_text=f"{PROBLEM_TYPE_BASE}<code>: names the kind of problem."),
            "title": serializers.CharField(help_text="A short summary of the kind of problem."),
            "status": StatusField(status),
            "detail": serializers.CharField(help_text="What went wrong in this request, for people."),
            "code": ProblemCodeField(codes),
        }
        if "invalid_request" in codes:
            fields["errors"] = serializers.DictField(
                child=serializers.JSONField(),
                required=False,
                help_text="invalid_request: each field that is wrong, with its messages.",
            )
        for code in codes:
            for name, field in self.members.get(code, {}).items():
                # A copy is a new field, declared after the ones above, so that it comes after them.
                fields[name] = copy.deepcopy(field)
        name = f"{_pascal(self.operation_id)}{_phrase(status)}Problem"
        OPERATION_PROBLEMS.add(name)
        return type(name, (serializers.Serializer,), fields)

    def responses(self) -> dict[Any, OpenApiResponse]:
        responses: dict[Any, OpenApiResponse] = {}
        for status, codes in self.by_status().items():
            # The codes particular to the operation with their meanings, after the status rule; the others,
            # which many operations share, by name: their meanings, and the rule of a status that has only
            # those, are in the document's tables (the document is read on every client's start, and would
            # repeat them on every operation).
            lines = [f"- `{code}`: {self.meaning(code)}" for code in codes if code in self.named]
            shared = [f"`{code}`" for code in codes if code not in self.named]
            if shared:
                lines.append(f"- {', '.join(shared)}: see the table of codes.")
            listed = "\n".join(lines)
            own = any(code in self.named for code in codes)
            responses[(status, PROBLEM_CONTENT_TYPE)] = OpenApiResponse(
                response=self._serializer(status, codes),
                description=f"{STATUS_RULE[status]}\n\n{listed}" if own else listed,
            )
        return responses

    def _exemplified(self) -> list[str]:
        """The codes shown by example: each one particular to the operation, and for a status with none of
        those, the first of its codes."""
        shown: list[str] = []
        for codes in self.by_status().values():
            named = [code for code in codes if code in self.named]
            shown.extend(named or codes[:1])
        return shown

    def examples(self) -> list[OpenApiExample]:
        """The examples of the problems; for an operation that takes no body, the request's too."""
        request = [EMPTY_BODY_EXAMPLE] if self.body == "empty" else []
        return request + [
            OpenApiExample(
                f"{code}",
                value=self.example(code),
                response_only=True,
                status_codes=[str(problem(code).status)],
                media_type=PROBLEM_CONTENT_TYPE,
            )
            for code in self._exemplified()
        ]

    def example(self, code: str) -> dict[str, Any]:
        entry = problem(code)
        return {
            "type": PROBLEM_TYPE_BASE + code,
            "title": entry.title,
            "status": entry.status,
            "detail": self.example_details.get(code, SHARED_EXAMPLE_DETAILS.get(code, self.meaning(code))),
            "code": code,
            **_example_members(code, self.example_members.get(code, {})),
        }

    def headers(self) -> list[OpenApiParameter]:
        statuses = self.by_status()
        found = []
        if 401 in statuses:
            found.append(WWW_AUTHENTICATE_HEADER)
        if 405 in statuses:
            found.append(ALLOW_HEADER)
        retried = [status for status in (429, 503) if status in statuses]
        if retried:
            found.append(retry_after_header(retried))
        return found


def response_header(name: str, description: str, statuses: list[int], schema: Any = str) -> OpenApiParameter:
    return OpenApiParameter(
        name, schema, OpenApiParameter.HEADER, description=description, response=statuses, required=True
    )


WWW_AUTHENTICATE_HEADER = response_header(
    "WWW-Authenticate", 'The scheme to authenticate with: `Bearer realm="api"`.', [401]
)


ALLOW_HEADER = response_header("Allow", "The methods this URL takes, as `GET, POST, HEAD, OPTIONS`.", [405])


def retry_after_header(statuses: list[int]) -> OpenApiParameter:
    return response_header(
        "Retry-After", "Seconds to wait before the next request.", statuses, {"type": "integer", "minimum": 1}
    )


INTRODUCTION = """Play Kings in the Corner against computer players, replay any game from its seed, and
compete on the daily deal. The rules of the game, the byte-exact shuffle behind every deal and how to check a
daily deal against its commitment are in [the rules document](/api/v1/rules.md) (`GET /api/v1/rules.md`);
the rule sets and options as JSON: `GET /api/v1/rules`.

## Getting started
1. `POST /api/v1/players` with `{"name": "Ada"}` answers with a token, shown once.
2. Send it on every other request as `Authorization: Bearer <token>`.
3. `POST /api/v1/games` starts a game; its `legal_moves` are what you may do.
4. `POST /api/v1/games/{id}/moves` with `{"moves": [...], "expected_version": n}` plays a turn; after an
   `end_turn` the computer players move at once, and the response tells what they did.
5. To play with friends, start a game with `seats` (people and computers): send its `invitation.url` (the
   web client's page for it, `/play/join/{code}`) to them; a client takes a seat by POSTing its
   `invitation.join`, `POST /api/v1/invitations/{code}`.

## Tokens
`health`, `POST players`, `rules`, `rules.md`, `daily/anchor`, `daily/commitments` and this document take no
token: an Authorization header sent with them is ignored. Every other
operation reads a token when one is sent and refuses one that is not valid with 401 `invalid_token`;
those that need one answer 401 `not_authenticated` without it.

## Versions and retries
Every game response carries `ETag: "<version>"`. Send it back in `If-Match` (or as `expected_version`):
a write against a stale version is a 409 `version_conflict` with the game as it is in `current`. An
`Idempotency-Key` header makes a retried write answer with its first response (`Idempotent-Replayed: true`).
Requests are rate-limited per player, or per address without a token: 429 with `Retry-After`. While the
database does not answer, every operation that reads it is a 503 `database_unavailable` with `Retry-After`.

Besides the headers each operation documents, every response carries `API-Version`, the version of this
contract (the document's `info.version`; CHANGELOG.md lists what each version changed), and HTTP's own:
`Content-Type`, `Allow` (the methods the URL takes; a method it does not take is a 405
`method_not_allowed`), `Vary`, and the CORS and security headers. An `Accept` header or `?format=` that
names nothing an operation answers in (the API answers in JSON) is a 406 `not_acceptable`.

## This document
`GET /api/v1/schema/` serves it as JSON (`application/vnd.oai.openapi+json`) unless the request asks for
YAML: `Accept: application/vnd.oai.openapi` or `application/yaml`, or `?format=yaml` (`?format=json` names
JSON). Its keys are sorted, so it is the same bytes every time it is built.

## Errors
Every error is `application/problem+json` (RFC 9457) with a machine-readable `code`: one shape, the
`Problem` schema, for every error of every operation. Switch on `code`: each code has one status on every
operation, by this rule; each operation lists, per status, the codes it can answer with (`x-codes`, a list
on the response), and the meaning of each in the response's description or the table of codes below. A few
codes add members (`ProblemWithCurrent`, `ProblemWithMoveIndex`, `ProblemWithCacheAndDatabase`: `Problem`
and those members).
"""


def _description() -> str:
    codes: dict[int, list[str]] = {}
    for code, entry in sorted(PROBLEMS.items()):
        codes.setdefault(entry.status, []).append(f"`{code}`")
    rule = "\n".join(
        f"| {status} | {text} | {', '.join(codes.get(status, []))} |" for status, text in STATUS_RULE.items()
    )
    table = "\n".join(
        f"| `{code}` | {entry.status} | {entry.title} | {entry.meaning} |"
        for code, entry in sorted(PROBLEMS.items())
    )
    return (
        f"{INTRODUCTION}\n| status | when | codes |\n| --- | --- | --- |\n{rule}\n\n"
        f"## The table of codes\n| code | status | title | meaning |\n| --- | --- | --- | --- |\n{table}\n"
    )


def _problem_schema(operation_problem: dict[str, Any]) -> dict[str, Any]:
    """The shared Problem schema: the members every problem has (from any operation's problem schema,
    without the narrowing of its `status` and `code`), and `errors`, which invalid_request carries."""
    properties = operation_problem["properties"]
    shared = {name: dict(properties[name]) for name in PROBLEM_MEMBERS}
    shared["status"] = {"type": "integer", "description": "The HTTP status: the response's own."}
    shared["code"] = {
        "type": "string",
        "description": "Machine-readable; switch on it. Each operation lists, per status, the codes it can "
        "answer with; every code is in the document's table of codes.",
    }
    shared["errors"] = {
        "type": "object",
        "additionalProperties": {},
        "description": "invalid_request: each field that is wrong, with its messages.",
    }
    return {
        "type": "object",
        "description": "An error, as RFC 9457 problem details, with a machine-readable `code`. Some codes "
        "add members of their own, named where an operation can answer with them.",
        "properties": shared,
        "required": list(PROBLEM_MEMBERS),
    }


def _problem_extension(members: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The shared Problem with the members some codes add (version_conflict's `current`, a refused move's
    `move_index`, health's `database` and `cache`): its component's name, and its schema."""
    name = "ProblemWith" + "And".join(_pascal(member) for member in sorted(members))
    return name, {
        "allOf": [{"$ref": PROBLEM_REF}, {"type": "object", "properties": dict(sorted(members.items()))}]
    }


def _fold_problems(result: dict[str, Any]) -> None:
    """One shared Problem component instead of a problem schema per operation and status, so that code
    generators make one error type of it: each problem response refers to Problem (or to Problem with the
    members its codes add) and lists its codes in `x-codes`, their meanings in its description."""
    schemas: dict[str, Any] = result["components"]["schemas"]
    names = sorted(name for name in schemas if name in OPERATION_PROBLEMS)
    if not names:
        return
    schemas["Problem"] = _problem_schema(schemas[names[0]])
    for operations in result["paths"].values():
        for operation in operations.values():
            for response in operation.get("responses", {}).values():
                media = response.get("content", {}).get(PROBLEM_CONTENT_TYPE)
                if media is None:
                    continue
                properties = schemas[media["schema"]["$ref"].rsplit("/", 1)[-1]]["properties"]
                response["x-codes"] = list(properties["code"]["enum"])
                members = {
                    name: schema
                    for name, schema in properties.items()
                    if name not in PROBLEM_MEMBERS and name != "errors"
                }
                if not members:
                    media["schema"] = {"$ref": PROBLEM_REF}
                    continue
                extension, schema = _problem_extension(members)
                # Two operations whose codes add a member describe it alike.
                assert schemas.setdefault(extension, schema) == schema, extension
                media["schema"] = {"$ref": f"#/components/schemas/{extension}"}
    for name in names:
        del schemas[name]
    result["components"]["schemas"] = dict(sorted(schemas.items()))


def _shared_example(code: str) -> dict[str, Any]:
    entry = problem(code)
    return {
        "type": PROBLEM_TYPE_BASE + code,
        "title": entry.title,
        "status": entry.status,
        "detail": SHARED_EXAMPLE_DETAILS.get(code, entry.meaning),
        "code": code,
        **_example_members(code, {}),
    }


def _share_examples(result: dict[str, Any]) -> None:
    """A problem example that many operations show alike (a code they share, e.g. `rate_limited`) is
    written once, in components.examples, and referred to."""
    shared: dict[str, Any] = {}
    for operations in result["paths"].values():
        for operation in operations.values():
            for response in operation.get("responses", {}).values():
                examples = response.get("content", {}).get(PROBLEM_CONTENT_TYPE, {}).get("examples", {})
                for name, example in examples.items():
                    value = example.get("value", {})
                    if value.get("code") in PROBLEMS and value == _shared_example(value["code"]):
                        shared[name] = example
                        examples[name] = {"$ref": f"#/components/examples/{name}"}
    if shared:
        result["components"]["examples"] = dict(sorted(shared.items()))


# The responses nearly every operation has alike, whose codes share their status with no other code of
# theirs: written once, in components.responses, and referred to (about 20 KB of the document's 300).
SHARED_RESPONSE_CODES = frozenset({*ROUTING_CODES, *NEGOTIATION_CODES})


def _share_responses(result: dict[str, Any]) -> None:
    """A problem response whose only codes are ones every operation answers alike (405 `method_not_allowed`,
    406 `not_acceptable`) is written once, in components.responses (named by its code), and referred to."""
    shared: dict[str, Any] = {}
    for operations in result["paths"].values():
        for operation in operations.values():
            responses = operation.get("responses", {})
            for status, response in responses.items():
                codes = response.get("x-codes", [])
                if len(codes) != 1 or codes[0] not in SHARED_RESPONSE_CODES:
                    continue
                name = _pascal(codes[0])
                # Every operation answers the code alike.
                assert shared.setdefault(name, response) == response, (name, operation["operationId"])
                responses[status] = {"$ref": f"#/components/responses/{name}"}
    if shared:
        result["components"]["responses"] = dict(sorted(shared.items()))


def postprocess_schema(
    result: dict[str, Any], generator: Any, request: Any = None, **kwargs: Any
) -> dict[str, Any]:
    """Writes the document's description from the registry, and names the server it is served from."""
    result["info"]["description"] = _description()
    _fold_problems(result)
    _share_examples(result)
    _share_responses(result)
    origin = request.build_absolute_uri("/").rstrip("/") if request is not None else "http://127.0.0.1:8000"
    result["servers"] = [{"url": origin, "description": "This server"}]
    return result
