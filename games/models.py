"""The database models of `games`: players and their tokens, games with their state snapshot, and the
append-only logs of moves and events from which any game replays."""

import json
import uuid
from datetime import datetime
from typing import Any

from django.db import models
from django.utils import timezone


class StoredResponseEncoder(json.JSONEncoder):
    """A stored response (IdempotentRequest.response) as JSON: a time as the API's renderer writes it (ISO
    8601, every digit, UTC as `Z`), so that a replay of the response is its first rendering to the byte."""

    def default(self, o: Any) -> Any:
        if isinstance(o, datetime):
            text = o.isoformat()
            return text[:-6] + "Z" if text.endswith("+00:00") else text
        return super().default(o)


# The abandonment rule of a table without a turn clock: a person's turn may last this long (by default) before
# another seated person may hand their seat to a computer.
ABANDON_SECONDS_DEFAULT = 86400

# A player's discriminator has four digits: 9,000 players may share a name skeleton.
DISCRIMINATOR_MIN = 1000
DISCRIMINATOR_MAX = 9999


def player_display_name(name: str, discriminator: int) -> str:
    return f"{name}#{discriminator}"


class Player(models.Model):
    """A player of the API. The bearer token is the identity; only its SHA-256 is stored. Names are display
    only and may repeat; players whose names look alike (one `name_skeleton`) are told apart by the
    `discriminator` the server drew for them, shown as `Ada#4821` (`display_name`)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=32)
    name_skeleton = models.TextField(
        editable=False, help_text="The name as names that look alike share it (games.names.name_skeleton)."
    )
    discriminator = models.PositiveSmallIntegerField(
        editable=False, help_text=f"{DISCRIMINATOR_MIN}-{DISCRIMINATOR_MAX}, one player's of a name skeleton."
    )
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set when the player is built, so never after created_at (set at the insert): a player whose token was
    # never rotated has token_rotated_at <= created_at (games.rotation_replay.replay_end_on_first_use).
    token_rotated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["name_skeleton", "discriminator"], name="player_name_discriminator"
            ),
            models.CheckConstraint(
                condition=models.Q(
                    discriminator__gte=DISCRIMINATOR_MIN, discriminator__lte=DISCRIMINATOR_MAX
                ),
                name="player_discriminator_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.display_name} ({self.id})"

    @property
    def display_name(self) -> str:
        """The name as every view shows it: `Ada#4821`."""
        return player_display_name(self.name, self.discriminator)

    # DRF's IsAuthenticated and throttles read these on request.user.
    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def is_anonymous(self) -> bool:
        return False


class Game(models.Model):
    """One game: its creator (`player`: who made it, in seat 0, or the seated person the role passed to when
    the creator left), and 2 to 4 seats, each a person or a computer player (GameSeat rows, the table as it
    is). `state` is the engine's state snapshot at `version`; it holds hidden
    cards and the seed, so it is never rendered as it is. A table waiting for its people has no state yet
    (`{}`): its first hand is dealt when it starts."""

    class Status(models.TextChoices):
        WAITING = "waiting"
        PLAYING = "playing"
        HAND_OVER = "hand_over"
        FINISHED = "finished"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="games")
    opponents = models.JSONField(help_text="The computer players by seat 1..n-1: [{name, level}].")
    rules = models.JSONField()
    target_score = models.PositiveIntegerField(null=True, blank=True)
    seed = models.CharField(max_length=64, editable=False)
    state = models.JSONField()
    version = models.PositiveIntegerField(
        default=1, help_text="Rises by one with every accepted request that changes the game."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PLAYING)
    hand_number = models.PositiveIntegerField(default=1)
    # The last seq written to each log, so that appending needs no query for the current maximum.
    move_seq = models.PositiveIntegerField(default=0, editable=False)
    event_seq = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Tables with several people: the invitation link, the turn clock (or, without one, the abandonment rule),
    # the level computers take empty seats at when the creator starts the table, and the table's next game
    # once a rematch is asked for. The creator (`player`) is whoever made the table, or the person the role
    # passed to when they left.
    invitation_code = models.CharField(
        max_length=64,
        unique=True,
        null=True,
        blank=True,
        editable=False,
        help_text="The invitation link's code (secrets.token_urlsafe, 192 bits); null: none.",
    )
    invitation_revoked_at = models.DateTimeField(null=True, blank=True)
    turn_seconds = models.PositiveIntegerField(
        null=True, blank=True, help_text="Seconds a person has for a turn; null: no clock."
    )
    turn_deadline = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the person to move runs out of time; null: no person is on a clock.",
    )
    turn_started_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the person to move began their turn; null: no person is to move.",
    )
    abandon_seconds = models.PositiveIntegerField(
        null=True,
        blank=True,
        default=ABANDON_SECONDS_DEFAULT,
        help_text="At a table without a clock: seconds a person's turn may last before another seated "
        "person may hand their seat to a computer; null at a clocked table (the clock plays an absent "
        "person's turns).",
    )
    # The seats again, on the game's row, so that the move path's one read needs no subquery for them: written
    # with the GameSeat rows by every write that changes them.
    seating = models.JSONField(
        null=True,
        blank=True,
        editable=False,
        help_text="GameSeat's rows as [seat, kind, level, name, player]; null: creator, `opponents`.",
    )
    fill_level = models.CharField(
        max_length=8, default="normal", help_text="The level computers take empty seats at on start."
    )
    rematch = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="rematch_of",
        help_text="The game this table went on to once this one was finished.",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["player", "-created_at", "-id"], name="game_player_newest"),
            # The turn clock's catch-up job reads the overdue turns.
            models.Index(
                fields=["turn_deadline"],
                name="game_turn_deadline",
                condition=models.Q(turn_deadline__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"Game {self.id} ({self.status})"


class GameSeat(models.Model):
    """A seat at a game: a person (`player`, null while the seat waits for one) or a computer player at a
    level. A person holds at most one seat of a game. Seat 0 is the table's maker's."""

    class Kind(models.TextChoices):
        PERSON = "person"
        COMPUTER = "computer"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="seats")
    seat = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=8, choices=Kind.choices)
    player = models.ForeignKey(Player, null=True, blank=True, on_delete=models.CASCADE, related_name="seats")
    # Null for a person, as the API shows it (a person has no level, which is not an empty level).
    level = models.CharField(  # noqa: DJ001
        max_length=8, null=True, blank=True, help_text="A computer's level; null for a person."
    )
    name = models.CharField(
        max_length=40,
        blank=True,
        help_text="A person's display name (`Ada#4821`), a computer's name (`Millie`); empty while a "
        "person's seat is free.",
    )
    joined_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["game", "seat"]
        constraints = [
            models.UniqueConstraint(fields=["game", "seat"], name="game_seat_unique"),
            models.UniqueConstraint(fields=["game", "player"], name="game_seat_player_unique"),
            models.CheckConstraint(condition=models.Q(seat__lte=3), name="game_seat_range"),
            models.CheckConstraint(
                condition=models.Q(kind="person", level__isnull=True)
                | models.Q(kind="computer", level__isnull=False, player__isnull=True),
                name="game_seat_kind",
            ),
        ]
        # A player's games (the list, and the authenticating read of every request on a game).
        indexes = [models.Index(fields=["player", "game"], name="game_seat_player")]

    def __str__(self) -> str:
        return f"{self.game_id} seat {self.seat}: {self.name or self.kind}"


class GameMove(models.Model):
    """The append-only log of actions in order: each move made by any seat, and each new hand dealt."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="moves")
    seq = models.PositiveIntegerField()
    hand_number = models.PositiveIntegerField()
    seat = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Null for a deal.")
    move = models.JSONField(help_text='A move\'s canonical JSON, or {"type": "deal"} for a new hand.')
    version = models.PositiveIntegerField(help_text="The game's version after this action.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "seq"]
        constraints = [models.UniqueConstraint(fields=["game", "seq"], name="game_move_seq_unique")]

    def __str__(self) -> str:
        return f"{self.game_id} #{self.seq}: {self.move}"


class GameEvent(models.Model):
    """The append-only event log. Draws name their card here; who may see it is decided when read."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    version = models.PositiveIntegerField(help_text="The game's version once this event had happened.")
    type = models.CharField(max_length=16)
    data = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "seq"]
        constraints = [models.UniqueConstraint(fields=["game", "seq"], name="game_event_seq_unique")]
        indexes = [models.Index(fields=["game", "version"], name="game_event_version")]

    def __str__(self) -> str:
        return f"{self.game_id} event {self.seq}: {self.type}"


class GameHand(models.Model):
    """A finished hand's result, one row a hand, written in the transaction of the move that ended it: the
    game's state keeps only the last one, so that it does not grow with the hands played."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="hands")
    hand_number = models.PositiveIntegerField()
    result = models.JSONField(
        help_text="As the hand_over event: reason, out_seat, every seat's cards left, penalties, the totals "
        "after it and the turns taken."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "hand_number"]
        constraints = [models.UniqueConstraint(fields=["game", "hand_number"], name="game_hand_unique")]

    def __str__(self) -> str:
        return f"{self.game_id} hand {self.hand_number}"


class IdempotentRequest(models.Model):
    """The first response to a request sent with an Idempotency-Key, replayed for retries of it."""

    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="idempotent_requests")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of method, path and body.")

    class Kind(models.TextChoices):
        # The one kind stored today: the game as the request's seat sees it after the change (a GameView).
        GAME_VIEW = "game_view", "game view"

    kind = models.CharField(
        max_length=16,
        choices=Kind.choices,
        default=Kind.GAME_VIEW,
        help_text="What the stored response is; the view that replays it decides its status.",
    )
    response = models.JSONField(encoder=StoredResponseEncoder)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["player", "key"], name="idempotency_key_unique")]
        # The beat job deletes the expired ones by age.
        indexes = [models.Index(fields=["created_at"], name="idempotency_key_created")]

    def __str__(self) -> str:
        return f"{self.player_id}: {self.key}"


class TokenRotation(models.Model):
    """A token replaced by rotation, kept for IDEMPOTENCY_KEY_TTL: a token is rotated from once, and a retried
    rotation (its response lost) sent with the replaced token and its Idempotency-Key gets the same new token.
    That token is kept only sealed with a key derived from the replaced token and the Idempotency-Key, neither
    of which is stored in a form it can be derived from: the database alone cannot give it up."""

    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="token_rotations")
    previous_token_hash = models.CharField(
        max_length=64, unique=True, help_text="SHA-256 of the replaced token."
    )
    idempotency_key = models.CharField(max_length=255, blank=True)
    sealed_token = models.CharField(
        max_length=128, blank=True, help_text="The new token, sealed; empty without an Idempotency-Key."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["created_at"], name="token_rotation_created")]

    def __str__(self) -> str:
        return f"{self.player_id} at {self.created_at}"


class PersonFeed(models.Model):
    """A player's person stream's counter: `seq` is the last seq given to one of the player's PersonEvent
    rows (each write that adds some takes this row's lock: `UPDATE … SET seq = seq + n`, so the seqs are
    contiguous and in commit order), `broadcast_mark` the last PersonBroadcast taken into the feed. Made at
    the player's first person event or stream read."""

    player = models.OneToOneField(Player, primary_key=True, on_delete=models.CASCADE, related_name="feed")
    seq = models.PositiveIntegerField(default=0)
    broadcast_mark = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.player_id}: {self.seq}"


class PersonEvent(models.Model):
    """One event of a player's person stream (GET players/me/stream), kept PERSON_EVENTS_RETENTION_SECONDS:
    `seq` is the player's own, 1, 2, 3, …; `data` the event's fields (games.shapes.PersonEventData)."""

    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="person_events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=24)
    data = models.JSONField()
    # A daily event taken in from its broadcast keeps the broadcast's time.
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["player", "seq"]
        constraints = [models.UniqueConstraint(fields=["player", "seq"], name="person_event_seq_unique")]
        # The beat job prunes them by age.
        indexes = [models.Index(fields=["created_at"], name="person_event_created")]

    def __str__(self) -> str:
        return f"{self.player_id} person event {self.seq}: {self.type}"


class PersonBroadcast(models.Model):
    """An event for every person (the daily deal's): one row, not one a player; each person's feed takes the
    broadcasts it has not had into its own seq when its stream reads. `seq` has no gaps (the newest row is
    never pruned), so a feed that finds the broadcast after its mark pruned knows it missed some; `key` makes
    each broadcast once (`daily_par:2026-05-01`)."""

    seq = models.PositiveIntegerField(primary_key=True)
    key = models.CharField(max_length=64, unique=True)
    type = models.CharField(max_length=24)
    data = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["seq"]

    def __str__(self) -> str:
        return f"broadcast {self.seq}: {self.key}"
