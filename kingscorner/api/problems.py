"""The registry of problem codes: every `code` the API can answer with, its HTTP status, title and meaning.
The exception handler renders errors from it and the OpenAPI schema documents each operation's errors from
it, so a code has one status on every endpoint."""

from dataclasses import dataclass

# A problem's `type`: this, then its code.
PROBLEM_TYPE_BASE = "https://kingscorner.example/problems/"


@dataclass(frozen=True, slots=True)
class Problem:
    status: int
    title: str
    meaning: str


# The status rule: which status a kind of refusal gets, whatever the endpoint.
STATUS_RULE: dict[int, str] = {
    400: "The request cannot be read (HTTP, JSON, the request schema, a header, parameter, card, pile or "
    "rule set). Nothing was changed.",
    401: "No token where one is needed, or a token that is not valid.",
    403: "You are who you say, but this is not allowed for you now.",
    404: "No such resource, or not yours.",
    409: "The current state of the resource forbids the request: a stale version, a game or hand that is "
    "over or still in play, an attempt past its deadline. Read the resource and decide again.",
    405: "This URL does not take the method; Allow lists those it takes.",
    406: "The response cannot be in a media type the request accepts.",
    411: "A body was sent in chunks, without Content-Length.",
    413: "The request is too large: its body, or its list of moves.",
    415: "The body is not JSON.",
    422: "The request is well-formed but asks for the impossible: an illegal move, a position no game can "
    "reach, an Idempotency-Key reused for another request, a seat replaced that is yours or at a clocked "
    "table.",
    429: "Too many requests; wait for the seconds in Retry-After.",
    431: "A request header is too large (answered by the server or proxy, before the API).",
    503: "The service cannot answer now; try again later.",
}

PROBLEMS: dict[str, Problem] = {
    # 400: the request cannot be read.
    "malformed_json": Problem(400, "Malformed JSON", "The body is not valid JSON."),
    "json_too_deep": Problem(
        400, "JSON nested too deeply", "The body nests arrays and objects more than 32 levels deep."
    ),
    "invalid_request": Problem(
        400,
        "Invalid request",
        "A body member is missing, unknown, of the wrong type or out of range, or a query parameter the "
        "operation takes is malformed or out of range (one it does not take is ignored); `errors` names "
        "each field with its messages.",
    ),
    "malformed_request": Problem(
        400,
        "Malformed request",
        "The request cannot be read as HTTP, and is refused before the API: a request line over 4,094 bytes "
        "(as a long query string makes), a header that cannot be read, a Transfer-Encoding other than "
        "chunked, a Host the server does not serve, or no HTTP at all.",
    ),
    "invalid_if_match": Problem(400, "Invalid If-Match", 'If-Match does not name one version, as "3".'),
    "version_mismatch": Problem(
        400, "Versions disagree", "`expected_version` in the body and If-Match name different versions."
    ),
    "invalid_idempotency_key": Problem(
        400, "Invalid Idempotency-Key", "An Idempotency-Key is 1 to 255 printable characters."
    ),
    "invalid_status": Problem(400, "Invalid status filter", "`status` is not one of a game's statuses."),
    "invalid_limit": Problem(400, "Invalid limit", "`limit` is not a whole number in the allowed range."),
    "invalid_cursor": Problem(400, "Invalid cursor", "`cursor` is not one this API gave out."),
    "invalid_date": Problem(400, "Invalid date", "The day is not a real date written YYYY-MM-DD."),
    "invalid_date_range": Problem(
        400, "Invalid date range", "`from` is after `to`, or the range is longer than 366 days."
    ),
    "date_too_far_ahead": Problem(
        400, "Date too far ahead", "Commitments are published for the next 30 days, not further ahead."
    ),
    "invalid_card": Problem(400, "Invalid card", "A card code cannot be read: a rank, then a suit, as QD."),
    "unknown_pile": Problem(400, "Unknown pile", "A pile name is not one of N E S W NE SE SW NW."),
    "invalid_move": Problem(
        400, "Invalid move", "A move is not a play, move_pile or end_turn object with its members."
    ),
    "invalid_rules": Problem(400, "Invalid rules", "`rules` is neither a rule set's name nor an object."),
    "unknown_rule_set": Problem(400, "Unknown rule set", "The rule set is not classic, casual or any_space."),
    "unknown_rule_option": Problem(400, "Unknown rule option", "A rule option does not exist."),
    "invalid_rule_value": Problem(400, "Invalid rule value", "A rule option has a value it does not take."),
    "incompatible_rules": Problem(
        400, "Incompatible rules", "draw=until_playable cannot be combined with draw_timing=end."
    ),
    # 401
    "not_authenticated": Problem(
        401,
        "Not authenticated",
        "No token was sent (no Authorization header, or one of another scheme than Bearer); send "
        "`Authorization: Bearer <token>`.",
    ),
    "invalid_token": Problem(
        401,
        "Invalid token",
        "The token is not valid (it may have been replaced), or the header is malformed.",
    ),
    "invalid_ticket": Problem(
        401,
        "Invalid stream ticket",
        "The stream ticket was not given out here, has expired, is for another game, or was asked for with "
        "a token since replaced: ask for a new one (POST games/{id}/stream-tickets).",
    ),
    # 403
    "hints_refused_in_ranked_attempt": Problem(
        403,
        "Hints refused",
        "No hints in any game at a daily deal while your ranked attempt at it is unfinished.",
    ),
    "analysis_refused_in_ranked_attempt": Problem(
        403,
        "Analysis refused",
        "No position analysis for a caller with an unfinished ranked daily attempt.",
    ),
    "leave_refused_in_ranked_attempt": Problem(
        403,
        "Leave refused",
        "A ranked daily attempt's game cannot be left: play it to its end, or its finishing deadline closes "
        "it.",
    ),
    "not_creator": Problem(
        403,
        "Not the creator",
        "Only the table's creator (`creator_seat`) may start it or issue or revoke its invitation.",
    ),
    # 404
    "not_found": Problem(
        404, "Not found", "Nothing is at this URL, e.g. a game id that is not a UUID, or an empty day."
    ),
    "game_not_found": Problem(404, "Game not found", "You have no game with this id (no seat at it)."),
    "invitation_not_found": Problem(
        404, "Invitation not found", "No open invitation has this code: it is unknown or was revoked."
    ),
    "seat_not_found": Problem(404, "Seat not found", "The table has no seat with this number."),
    "no_daily_deal": Problem(
        404, "No daily deal", "That day has not started yet, or is before the first daily deal."
    ),
    "no_season": Problem(
        404, "No season", "The day is before the first season of hash-chained seeds: it has no anchor."
    ),
    "no_ranked_result": Problem(
        404, "No ranked result", "You have no ranked result that day (none started, or one still in play)."
    ),
    "par_not_ready": Problem(
        404,
        "Par not ready",
        "The day's par is published once its seed is revealed (`seed_revealed_at`) and the search has run, "
        "within minutes after.",
    ),
    # 405, 406: any URL answers a method it does not take with 405 and its Allow header.
    "method_not_allowed": Problem(
        405,
        "Method not allowed",
        "This URL does not take this method; the Allow header lists those it takes.",
    ),
    "not_acceptable": Problem(406, "Not acceptable", "The API answers only in JSON."),
    # 409: the state of the resource forbids the request.
    "version_conflict": Problem(
        409,
        "Version conflict",
        "The game is at another version than the one named: `current` is the game as it is now, and the "
        "ETag header its version.",
    ),
    "game_over": Problem(409, "Game over", "The game is finished; it takes no more moves or hands."),
    "hand_over": Problem(409, "Hand over", "The hand is over; deal the next one (POST hands) first."),
    "hand_in_progress": Problem(409, "Hand in progress", "The current hand is still being played."),
    "not_your_turn": Problem(409, "Not your turn", "Another seat is to move."),
    "table_full": Problem(409, "Table full", "Every seat of the table is taken."),
    "game_started": Problem(
        409, "Game started", "The game has started: it takes no more people, and starts once only."
    ),
    "game_not_started": Problem(
        409,
        "Game not started",
        "The table is waiting for its people (`status: waiting`): nothing is dealt until its seats are taken "
        "or its creator starts it.",
    ),
    "game_not_over": Problem(409, "Game not over", "A rematch follows a finished game only."),
    "seat_not_a_person": Problem(
        409,
        "Seat not a person's",
        "A computer plays the seat: only a person's seat is replaced.",
    ),
    "seat_not_abandoned": Problem(
        409,
        "Seat not abandoned",
        "The seat's person is not to move (`replaceable_at` null), or not yet for `abandon_seconds` "
        "(`replaceable_at` and Retry-After say when).",
    ),
    "ranked_attempt_open": Problem(
        409,
        "Ranked attempt open",
        "Your ranked attempt at this deal is unfinished: no other attempt at the deal until it is finished.",
    ),
    "token_rotated": Problem(
        409,
        "Token already replaced",
        "The token was replaced by another rotation (a concurrent one, or an earlier one whose response was "
        "lost: retried with its Idempotency-Key, that one answers with its new token).",
    ),
    "name_crowded": Problem(
        409,
        "Name crowded",
        "Every discriminator (1000-9999) of names that look like this one is taken; register another name.",
    ),
    "attempt_expired": Problem(
        409,
        "Attempt expired",
        "The ranked daily attempt's finishing deadline has passed: it was recorded as it stood then.",
    ),
    # 411, 413, 415
    "length_required": Problem(
        411,
        "Length required",
        "The body was sent in chunks without Content-Length; send its length (a proxy in front does).",
    ),
    "body_too_large": Problem(413, "Body too large", "The body is larger than the server takes."),
    "too_many_moves": Problem(413, "Too many moves", "More than 200 moves in one request."),
    "unsupported_media_type": Problem(415, "Unsupported media type", "Send the body as application/json."),
    # 422: well-formed, but not possible.
    "card_not_in_hand": Problem(422, "Card not in hand", "The card played is not in your hand."),
    "does_not_fit": Problem(
        422, "Does not fit", "The card (or pile) must be one rank lower than the top card, opposite colour."
    ),
    "nothing_on_ace": Problem(422, "Nothing on an Ace", "Nothing builds on an Ace."),
    "corner_needs_king": Problem(422, "Corner needs a King", "Only a King opens an empty corner."),
    "no_king_on_empty_side": Problem(
        422, "No King on an empty side", "A King cannot start an empty side pile under these rules."
    ),
    "corner_pile_cannot_move": Problem(422, "Corner pile cannot move", "Corner piles never move."),
    "same_pile": Problem(422, "Same pile", "A pile cannot move onto itself."),
    "empty_pile": Problem(422, "Empty pile", "There is no pile there to move."),
    "no_pile_into_empty_space": Problem(
        422, "No pile into an empty space", "A pile moves onto another pile, never into an empty space."
    ),
    "idempotency_key_reused": Problem(
        422, "Idempotency-Key reused", "This Idempotency-Key was used for a different request."
    ),
    "seat_is_yours": Problem(422, "Seat is yours", "The seat is yours: leave instead (POST leave)."),
    "table_has_clock": Problem(
        422,
        "Table has a clock",
        "At a clocked table the clock plays an absent person's turns: no seat is replaced.",
    ),
    "duplicate_card": Problem(422, "Duplicate card", "A card is in more than one place."),
    "too_many_cards": Problem(
        422, "Too many cards", "The hand, the piles and the stock hold more cards than the deck's 52."
    ),
    "pile_out_of_sequence": Problem(
        422,
        "Pile out of sequence",
        "A pile does not descend one rank at a time in alternating colours from its bottom card.",
    ),
    "corner_without_king": Problem(
        422, "Corner without a King", "Under these rules a corner pile starts with a King."
    ),
    "side_pile_starts_with_king": Problem(
        422, "Side pile starts with a King", "Under these rules no side pile starts with a King."
    ),
    # 429
    "rate_limited": Problem(
        429, "Too many requests", "Too many requests; wait for the seconds in Retry-After."
    ),
    "too_many_streams": Problem(
        429,
        "Too many streams",
        "Your player (STREAMS_PER_PLAYER, 8) or your address (STREAMS_PER_ADDRESS, 32) has as many event "
        "streams open as allowed; close one, or wait for the seconds in Retry-After.",
    ),
    # 431
    "headers_too_large": Problem(
        431,
        "Request header fields too large",
        "A request header is over 8,190 bytes (gunicorn), or the headers over nginx's 8 KB buffers; refused "
        "before the API.",
    ),
    # 5xx
    "server_error": Problem(500, "Server error", "The server failed; the error is logged."),
    "bad_gateway": Problem(
        502, "Bad gateway", "The proxy in front got no answer from the service; try again shortly."
    ),
    "database_unavailable": Problem(503, "Database unavailable", "The database does not answer."),
}


def problem(code: str) -> Problem:
    """The registry's entry for `code`; a code missing from the registry is a server error."""
    return PROBLEMS[code]
