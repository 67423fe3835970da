"""Examples for the OpenAPI schema, each a real request or response of the API."""

from typing import Any

EXAMPLES: dict[str, Any] = {
    "players_create_request": {},
    "players_create_response": {},
    "players_me_response": {},
    "players_token_rotate_response": {},
    "games_list_response": {},
    "games_create_request": {},
    "games_create_response": {},
    "games_get_response": {},
    "games_moves_request": {},
    "games_moves_response": {},
    "games_hands_deal_response": {},
    "games_events_response": {},
    "games_hint_response": {},
    "analysis_request": {},
    "analysis_response": {},
    "daily_today_response": {},
    "daily_day_response": {},
    "daily_attempt_create_response": {},
    "daily_leaderboard_response": {},
    "daily_leaderboard_me_response": {},
    "player_daily_history_response": {},
    "health_response": {},
    "api_index_response": {},
    "games_moves_version_conflict": {"current": {}, "detail": ""},
    "games_moves_does_not_fit": {"detail": ""},
}
