"""Output serializers compiled into plain functions: `compiled(serializer)` renders what the serializer's
`to_representation` renders, without DRF's machinery around each field, for the responses that every move
and read sends (the game view, its moves and events).

The serializer stays the one definition of the response and its schema: the function is made from its bound
fields, once, and does for each field what DRF does (serializers.Serializer.to_representation with
fields.Field.get_attribute), in fewer steps where a field's class keeps DRF's own behaviour:
- a value is looked up by the field's source (a key of a mapping, else an attribute); a value that is missing,
  callable, or has a dotted source, and a field that reads values its own way, go through the field's own
  get_attribute, and so do its defaults, nulls and omissions;
- None is rendered as None without the field;
- CharField and IntegerField (and subclasses that keep their rendering) render with str and int, ListField
  and nested serializers (many=True too) with their compiled children; every other field renders with its own
  to_representation."""

from collections.abc import Callable, Mapping
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from rest_framework import fields, serializers
from rest_framework.relations import PKOnlyObject

Render = Callable[[Any], Any]


def _plain_lookup(field: fields.Field[Any, Any, Any, Any]) -> bool:
    """Whether the field reads its value as Field.get_attribute does, by a one-step source."""
    return type(field).get_attribute is fields.Field.get_attribute and len(field.source_attrs) == 1


def _converter(field: fields.Field[Any, Any, Any, Any]) -> Render:
    """The field's rendering of a value that is not None."""
    if isinstance(field, serializers.BaseSerializer):
        return compiled(field)
    rendering = type(field).to_representation
    if rendering is fields.CharField.to_representation:
        return str
    if rendering is fields.IntegerField.to_representation:
        return int
    if rendering is fields.ListField.to_representation:
        assert isinstance(field, fields.ListField)
        child = _converter(field.child)
        return lambda data: [None if item is None else child(item) for item in data]
    return field.to_representation


def compiled(serializer: serializers.BaseSerializer[Any]) -> Render:
    """A function that renders an instance as `serializer.to_representation(instance)` does."""
    if isinstance(serializer, serializers.ListSerializer):
        assert isinstance(serializer.child, serializers.BaseSerializer)
        child = compiled(serializer.child)
        # ListSerializer also takes a model manager (its .all()); the responses compiled here hold lists.
        return lambda data: [child(item) for item in data]
    assert isinstance(serializer, serializers.Serializer)
    steps: list[tuple[str, str | None, fields.Field[Any, Any, Any, Any], Render]] = []
    for field in serializer._readable_fields:
        assert field.field_name is not None
        source = field.source_attrs[0] if _plain_lookup(field) else None
        steps.append((field.field_name, source, field, _converter(field)))

    def render(instance: Any) -> dict[str, Any]:
        # The views rendered here are mostly plain dicts: spared the abstract class's check.
        mapping = type(instance) is dict or isinstance(instance, Mapping)
        rendered: dict[str, Any] = {}
        for name, source, field, convert in steps:
            value: Any = _missing
            if source is not None:
                try:
                    value = instance[source] if mapping else getattr(instance, source)
                except (KeyError, AttributeError, ObjectDoesNotExist):
                    value = _missing
                if callable(value):
                    value = _missing
            if value is _missing:
                try:
                    value = field.get_attribute(instance)
                except fields.SkipField:
                    continue
            # DRF's own check (Serializer.to_representation), for the one class it makes.
            if type(value) is PKOnlyObject:
                rendered[name] = None if value.pk is None else convert(value)
            else:
                rendered[name] = None if value is None else convert(value)
        return rendered

    return render


_missing: Any = object()
