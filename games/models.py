"""The database models of `games`: players and their tokens, games with their state snapshot, and the
append-only logs of moves and events from which any game replays."""

import uuid

from django.db import models


class Player(models.Model):
    """A player of the API. The bearer token is the identity; only its SHA-256 is stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=32)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    token_rotated_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"

    # DRF's IsAuthenticated and throttles read these on request.user.
    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def is_anonymous(self) -> bool:
        return False


class Game(models.Model):
    """One game: the creator in seat 0 against computer players. `state` is the engine's state snapshot
    at `version`; it holds hidden cards and the seed, so it is never rendered as it is."""

    class Status(models.TextChoices):
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

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["player", "-created_at", "-id"], name="game_player_newest")]

    def __str__(self) -> str:
        return f"Game {self.id} ({self.status})"


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
    status_code = models.PositiveSmallIntegerField()
    response = models.JSONField()
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
