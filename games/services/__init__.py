"""The writes of `games`, one module per thing they change: `players` (players and their tokens), `tables`
(new games and tables, invitations, seats taken, the start, the rematch), `seats` (seats left, and an absent
person's seat replaced), `moves` (moves and new hands), `clock` (the turn clock) and `idempotency`
(Idempotency-Keys); `writes` holds what they share: the log of one request, the computer turns it plays and
the one function that saves a game. The public functions are
named here too, so that a caller writes `services.game_moves_apply(...)`."""

from games.services.clock import turn_clocks_catch_up, turn_time_out
from games.services.idempotency import idempotency_keys_expire
from games.services.moves import MAX_MOVES, game_hand_deal, game_moves_apply
from games.services.players import NewToken, player_create, player_rename, player_token_rotate
from games.services.seats import seat_leave, seat_replace
from games.services.tables import (
    ABANDON_SECONDS_MAX,
    ABANDON_SECONDS_MIN,
    TARGET_SCORE_MAX,
    TURN_SECONDS_MAX,
    TURN_SECONDS_MIN,
    Issued,
    Joined,
    SeatSpec,
    game_create,
    game_rematch,
    game_start,
    invitation_issue,
    invitation_join,
    invitation_revoke,
    seating,
    table_create,
)
from games.services.writes import GameChange

__all__ = [
    "ABANDON_SECONDS_MAX",
    "ABANDON_SECONDS_MIN",
    "MAX_MOVES",
    "TARGET_SCORE_MAX",
    "TURN_SECONDS_MAX",
    "TURN_SECONDS_MIN",
    "GameChange",
    "Issued",
    "Joined",
    "NewToken",
    "SeatSpec",
    "game_create",
    "game_hand_deal",
    "game_moves_apply",
    "game_rematch",
    "game_start",
    "idempotency_keys_expire",
    "invitation_issue",
    "invitation_join",
    "invitation_revoke",
    "player_create",
    "player_rename",
    "player_token_rotate",
    "seat_leave",
    "seat_replace",
    "seating",
    "table_create",
    "turn_clocks_catch_up",
    "turn_time_out",
]
