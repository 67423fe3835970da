"""The rules as the API serves them: the rule sets and options as JSON, and the rules document itself."""

from collections.abc import Iterable
from functools import cache
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games.engine.rules import (
    DEFAULT_PRESET,
    OPTION_MEANINGS,
    OPTIONS,
    PRESETS,
    RULE_SET_DESCRIPTIONS,
    make_rules,
)
from kingscorner.api.examples import EXAMPLES
from kingscorner.api.openapi import Refusals

# The document ships in the repository beside the packages; the quick start installs them in place
# (`pip install -e .`) and the Docker image copies docs/ next to them.
RULES_DOCUMENT_PATH = settings.BASE_DIR / "docs" / "rules.md"
MARKDOWN_CONTENT_TYPE = "text/markdown; charset=utf-8"

# Public reading: no token, and a bad Authorization header is ignored rather than refused.
RULES_REFUSALS = Refusals("rules", token="none")
RULES_DOCUMENT_REFUSALS = Refusals("rules_document", token="none", negotiated=False)


@cache
def rules_document() -> str:
    return RULES_DOCUMENT_PATH.read_text(encoding="utf-8")


@extend_schema_field({"oneOf": [{"type": "string"}, {"type": "boolean"}]})
class OptionValueField(serializers.JSONField):
    """A rule option's value: a name, or true/false for a yes-or-no option."""


class RuleOptionSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    values = serializers.ListField(
        child=OptionValueField(), help_text="The values it takes, the default first."
    )
    default = OptionValueField()
    meaning = serializers.CharField()


def _option_field(values: tuple[Any, ...]) -> serializers.Field[Any, Any, Any, Any]:
    return serializers.BooleanField() if isinstance(values[0], bool) else serializers.ChoiceField(values)


# One field per engine option, so that a new option shows up here without a second list to keep.
RuleSetOptionsSerializer = type(
    "RuleSetOptionsSerializer",
    (serializers.Serializer,),
    {
        "__doc__": "Every rule option's value in the rule set.",
        **{name: _option_field(values) for name, values in OPTIONS.items()},
    },
)


class RuleSetSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(help_text="What a game's `rules` (or its `preset`) names.")
    description = serializers.CharField()
    options = RuleSetOptionsSerializer()


class RulesOverviewSerializer(serializers.Serializer[Any]):
    document = serializers.URLField(
        help_text="The rules document (markdown): cards, the table, turns, scoring, the daily deal and the "
        "byte-exact shuffle."
    )
    default_rule_set = serializers.CharField(help_text="The rules of a game that names none.")
    rule_sets = RuleSetSerializer(many=True)
    options = RuleOptionSerializer(many=True)


def rules_overview(*, document_url: str) -> dict[str, Any]:
    return {
        "document": document_url,
        "default_rule_set": DEFAULT_PRESET,
        "rule_sets": [
            {"name": name, "description": RULE_SET_DESCRIPTIONS[name], "options": make_rules(name).options()}
            for name in PRESETS
        ],
        "options": [
            {"name": name, "values": list(values), "default": values[0], "meaning": OPTION_MEANINGS[name]}
            for name, values in OPTIONS.items()
        ],
    }


class RulesApi(APIView):
    authentication_classes = ()

    @extend_schema(
        operation_id="rules",
        tags=["rules"],
        auth=[],
        responses={
            200: OpenApiResponse(RulesOverviewSerializer, description="The rule sets and options."),
            **RULES_REFUSALS.responses(),
        },
        parameters=RULES_REFUSALS.headers(),
        examples=[
            OpenApiExample(
                "The rule sets and options",
                value=EXAMPLES["rules_response"],
                response_only=True,
                status_codes=["200"],
            ),
            *RULES_REFUSALS.examples(),
        ],
        summary="The rule sets and options",
        description=(
            "Every rule option with its values (the default first) and what it decides, the three rule sets "
            "(`classic`, `casual`, `any_space`) with the value of every option in each, and a link to the "
            "rules document. A game's `rules` names a rule set, or a rule set and single options to override."
        ),
    )
    def get(self, request: Request) -> Response:
        document_url = request.build_absolute_uri(reverse("rules-document"))
        return Response(RulesOverviewSerializer(rules_overview(document_url=document_url)).data)


class _MarkdownRegardless(BaseContentNegotiation):
    """The document is markdown whatever the client says it accepts; a refusal is still problem+json."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        return next(iter(parsers), None)

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


class RulesDocumentApi(APIView):
    authentication_classes = ()
    content_negotiation_class = _MarkdownRegardless

    @extend_schema(
        operation_id="rules_document",
        tags=["rules"],
        auth=[],
        responses={
            (200, "text/markdown"): OpenApiResponse(response=OpenApiTypes.STR, description="docs/rules.md"),
            **RULES_DOCUMENT_REFUSALS.responses(),
        },
        parameters=RULES_DOCUMENT_REFUSALS.headers(),
        examples=RULES_DOCUMENT_REFUSALS.examples(),
        summary="The rules document",
        description=(
            "The rules this API plays, in markdown: cards and their codes, the table and pile names, the "
            "deal, turns, what fits where, pile moves, scoring, games to a target, every option, rule sets, "
            "the daily deal, and the byte-exact shuffle with the hand and daily seeds and the commitment, "
            "with a worked example. Enough to write a client that plans whole turns, or to verify a deal."
        ),
    )
    def get(self, request: Request) -> HttpResponse:
        return HttpResponse(rules_document(), content_type=MARKDOWN_CONTENT_TYPE)
