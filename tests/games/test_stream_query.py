"""Where a stream starts (GET games/{id}/stream and players/me/stream): `last_event_id` and the
Last-Event-ID header read without their serializer when they are plain digits, as the serializer reads them,
and every other value checked and refused by the serializer itself."""

from typing import Any

import pytest
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from games.apis.person_stream import PersonStreamApi
from games.apis.streams import GameStreamApi, stream_after, stream_start_after

VALUES = ["0", "7", "007", "2147483647", "2147483648", "-1", "+5", "5.0", "", " 5", "x", "٣", "1e3"]
SERIALIZERS = [GameStreamApi.GameStreamQuerySerializer, PersonStreamApi.PersonStreamQuerySerializer]


def _request(query: dict[str, str], header: str | None = None) -> Request:
    headers = {} if header is None else {"HTTP_LAST_EVENT_ID": header}
    return Request(APIRequestFactory().get("/api/v1/players/me/stream", query, **headers))


def _by_the_serializer(request: Request, serializer: type[serializers.Serializer[Any]]) -> Any:
    query = serializer(data=request.query_params.dict())
    query.is_valid(raise_exception=True)
    return stream_after(request, query.validated_data)


def _outcome(read: Any) -> Any:
    try:
        return ("seq", read())
    except serializers.ValidationError as error:
        return ("refused", error.detail)


@pytest.mark.parametrize("serializer", SERIALIZERS)
@pytest.mark.parametrize("value", VALUES)
def test_a_query_seq_is_read_as_its_serializer_reads_it(
    value: str, serializer: type[serializers.Serializer[Any]]
) -> None:
    request = _request({"last_event_id": value, "ticket": "t"})
    fast = _outcome(lambda: stream_start_after(request, serializer))
    assert fast == _outcome(lambda: _by_the_serializer(request, serializer))


@pytest.mark.parametrize("value", [*VALUES, "  12  "])
def test_a_last_event_id_header_is_read_as_the_field_reads_it_and_wins_over_the_query(value: str) -> None:
    serializer = SERIALIZERS[0]
    for query in ({}, {"last_event_id": "3"}, {"last_event_id": "x"}):
        request = _request(query, value)
        fast = _outcome(lambda: stream_start_after(request, serializer))  # noqa: B023
        assert fast == _outcome(lambda: _by_the_serializer(request, serializer))  # noqa: B023


def test_no_seq_starts_at_the_beginning() -> None:
    assert stream_start_after(_request({}), SERIALIZERS[1]) == 0
    assert stream_start_after(_request({"ticket": "t"}), SERIALIZERS[0]) == 0


@pytest.mark.parametrize("serializer", SERIALIZERS)
@pytest.mark.parametrize("value", ["+5", "5.0", " 5", "٣", "1_0", "1e3", "-1", "x"])
def test_a_seq_not_written_in_ascii_digits_is_refused_in_the_query_and_the_header(
    value: str, serializer: type[serializers.Serializer[Any]]
) -> None:
    refused = _outcome(lambda: stream_start_after(_request({"last_event_id": value}), serializer))
    assert refused[0] == "refused" and "last_event_id" in refused[1]
    if value.strip() != value:
        return  # a header's surrounding spaces are not part of its value
    by_header = _outcome(lambda: stream_start_after(_request({}, value), serializer))
    assert by_header[0] == "refused" and "Last-Event-ID" in by_header[1]
