"""Input and output fields shared by the API's serializers: strict objects, strict scalars, constants; and
the check of a request that takes no body."""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension, OpenApiSerializerFieldExtension
from rest_framework import serializers
from rest_framework.request import Request


def no_body(request: Request) -> None:
    """Refuses a body other than none or `{}` (400 `invalid_request`; one that is not JSON was refused as it
    was read: 400 `malformed_json`, 415 `unsupported_media_type`), before the operation changes anything:
    what a client sends to an operation that takes nothing is a mistake, not something to ignore."""
    if request.data != {}:
        raise serializers.ValidationError("This operation takes no body: send none, or {}.")


# An input serializer that refuses members it does not know, so that a misspelt option is an error rather
# than silently ignored. `schema_constraints` adds JSON Schema keywords to its object schema. (A comment, not
# a docstring: the schema takes a serializer's docstring, inherited ones too, as its description.)
class StrictInputSerializer(serializers.Serializer[Any]):
    schema_constraints: dict[str, Any] = {}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: ["This field is not known."] for name in unknown}, code="unknown_field"
                )
        return super().to_internal_value(data)


class ConstantField(serializers.CharField):
    """A string member that always has one value, such as a move's or an event's `type`; in the schema it is
    an inline one-value enum, so that the many `type` members do not collide as enum components."""

    def __init__(self, value: str, **kwargs: Any) -> None:
        self.value = value
        super().__init__(**kwargs)


class ConstantFieldExtension(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    target_class = ConstantField

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        return {"type": "string", "enum": [self.target.value]}


class StrictCharField(serializers.CharField):
    """A string member that must be sent as a JSON string (DRF's CharField would take 5 as "5")."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        value: str = super().to_internal_value(data)
        return value


class StrictInputSerializerExtension(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """In the schema, a strict input object says that it takes no members besides its own."""

    target_class = StrictInputSerializer
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        schema["additionalProperties"] = False
        # Rules across members (`validate`) that JSON Schema can state, so that clients know them too; each
        # under allOf, where a code generator reads them as rules on the one object (beside its members, a
        # oneOf or anyOf reads as a union of other types, without the members).
        constraints: dict[str, Any] = getattr(self.target, "schema_constraints", {})
        rules = [
            *constraints.get("allOf", []),
            *({key: value} for key, value in constraints.items() if key != "allOf"),
        ]
        if rules:
            schema["allOf"] = rules
        return schema


class StrictIntegerField(serializers.IntegerField):
    """An integer member that must be sent as a JSON number (DRF's IntegerField would take "5" as 5)."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, str):
            self.fail("invalid")
        value: int = super().to_internal_value(data)
        return value


class QueryIntegerField(serializers.IntegerField):
    """An integer query parameter (or header) written in ASCII digits, with a leading minus sign at most.
    DRF's IntegerField reads its text with int(), which also takes "1_000", " 12", "+3", "12.0" and digits
    of other scripts ("١٢"); the schema's integer is none of those, so they are refused as any other text
    that is not one (400 `invalid_request`)."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, str):
            digits = data[1:] if data.startswith("-") else data
            if not (digits.isascii() and digits.isdigit()):
                self.fail("invalid")
        value: int = super().to_internal_value(data)
        return value
