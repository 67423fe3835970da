"""The access logs' redaction of stream tickets (kingscorner/access_log.py), line by line; the real servers'
logs are checked end to end in tests/e2e/test_access_logs.py."""

import logging

import pytest

from kingscorner.access_log import TicketRedactingFilter, redacted


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/api/v1/games/g/stream?ticket=eyJ.a:b-c_d", "/api/v1/games/g/stream?ticket=[redacted]"),
        (
            "GET /api/v1/games/g/stream?ticket=abc&last_event_id=4 HTTP/1.1",
            "GET /api/v1/games/g/stream?ticket=[redacted]&last_event_id=4 HTTP/1.1",
        ),
        ("/s?last_event_id=4&%74icket=abc", "/s?last_event_id=4&%74icket=[redacted]"),
        ("/s?TICKET=abc;x=1", "/s?TICKET=[redacted];x=1"),
        ("/s?ticket=", "/s?ticket=[redacted]"),
        ("/s?tickets=abc&a=ticket", "/s?tickets=abc&a=ticket"),
        ("/api/v1/health", "/api/v1/health"),
    ],
)
def test_a_ticket_parameter_is_redacted_wherever_it_stands(line: str, expected: str) -> None:
    assert redacted(line) == expected


def test_uvicorns_access_record_keeps_everything_but_the_ticket() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/api/v1/games/g/stream?ticket=secret", "1.1", 200),
        None,
    )
    assert TicketRedactingFilter().filter(record)
    assert (
        record.getMessage() == '127.0.0.1:5000 - "GET /api/v1/games/g/stream?ticket=[redacted] HTTP/1.1" 200'
    )
