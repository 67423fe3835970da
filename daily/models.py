"""The database models of `daily`: one deal per UTC day, players' attempts at it, the ranked submissions
and, per day, how many submissions reached each result (what ranks and percentiles are counted from)."""

import uuid

from django.db import models
from django.db.models import Q

from games.models import Game, Player


class DailyDeal(models.Model):
    """The deal of one UTC day. `seed` is secret until the day is over for the leaderboard (its finishing
    deadline); `commitment` is public at once."""

    date = models.DateField(unique=True)
    number = models.PositiveIntegerField(help_text="#1 is the deal of DAILY_EPOCH.")
    rules = models.JSONField()
    opponents = models.JSONField(help_text="The computer players by seat 1..3: [{name, level}].")
    seed = models.CharField(max_length=64, editable=False)
    commitment = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    attempts_closed_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When the ranked attempts unfinished at the finishing deadline were closed.",
    )

    class Meta:
        ordering = ["-date"]
        indexes = [
            # The days whose unfinished ranked attempts may still need closing: a handful of rows, whatever
            # the number of days.
            models.Index(
                fields=["date"], condition=Q(attempts_closed_at__isnull=True), name="daily_deal_unclosed"
            )
        ]

    def __str__(self) -> str:
        return f"Daily #{self.number} ({self.date.isoformat()})"


class Attempt(models.Model):
    """A player's game on a daily deal. Only the first attempt at the deal of its own day is ranked."""

    # The id clients see: the primary key is a global sequence, which would tell how many attempts are made.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="daily_attempts")
    deal = models.ForeignKey(DailyDeal, on_delete=models.CASCADE, related_name="attempts")
    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="daily_attempt")
    ranked = models.BooleanField()
    started_at = models.DateTimeField()

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            # The database, not a check before the insert, is what makes parallel starts yield one ranked
            # attempt.
            models.UniqueConstraint(
                fields=["player", "deal"], condition=Q(ranked=True), name="daily_one_ranked_attempt"
            )
        ]
        indexes = [models.Index(fields=["player", "deal"], name="daily_attempt_player_deal")]

    def __str__(self) -> str:
        kind = "ranked" if self.ranked else "unranked"
        return f"{self.player_id} on {self.deal_id} ({kind})"


class Submission(models.Model):
    """The result of a finished ranked attempt, recorded by the server when the hand ends."""

    # The leaderboard's last tie-breaker and its cursor's: opaque, where the primary key is a global sequence.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    attempt = models.OneToOneField(Attempt, on_delete=models.CASCADE, related_name="submission")
    deal = models.ForeignKey(DailyDeal, on_delete=models.CASCADE, related_name="submissions")
    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="daily_submissions")
    result = models.IntegerField()
    turns = models.PositiveIntegerField()
    finished_at = models.DateTimeField()
    closed = models.BooleanField(
        default=False,
        help_text="Closed as it stood at the finishing deadline, unfinished; it ranks after the finished "
        "attempts with the same result.",
    )

    class Meta:
        ordering = ["deal", "-result", "closed", "turns", "finished_at", "public_id"]
        constraints = [
            models.UniqueConstraint(fields=["deal", "player"], name="daily_one_submission_per_player")
        ]
        indexes = [
            # The leaderboard's order; pages are read from it by keyset.
            models.Index(
                fields=["deal", "-result", "closed", "turns", "finished_at", "public_id"],
                name="daily_submission_rank",
            ),
            models.Index(fields=["player", "deal"], name="daily_submission_player"),
        ]

    def __str__(self) -> str:
        return f"{self.player_id} on {self.deal_id}: {self.result:+d}"


class ResultCount(models.Model):
    """How many submissions of a deal reached `result`; updated in the transaction of each submission."""

    deal = models.ForeignKey(DailyDeal, on_delete=models.CASCADE, related_name="result_counts")
    result = models.IntegerField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["deal", "-result"]
        constraints = [models.UniqueConstraint(fields=["deal", "result"], name="daily_result_count_unique")]

    def __str__(self) -> str:
        return f"{self.deal_id}: {self.count} at {self.result:+d}"


class DailyPar(models.Model):
    """The best result known on a day's deal, computed once its seed is revealed and its ranked attempts are
    closed: the line of the player's moves that reaches it (verified by replaying it through the engine)
    and how it was found, by the par search or by a ranked player whose recorded line beat the search."""

    class Method(models.TextChoices):
        BEAM = "beam", "the par search"
        NORMAL = "normal", "the normal computer player's line in seat 0"
        SHARP = "sharp", "the sharp computer player's line in seat 0"
        PLAYER = "player", "a ranked player's line"

    deal = models.OneToOneField(DailyDeal, on_delete=models.CASCADE, related_name="par")
    result = models.IntegerField()
    turns = models.PositiveIntegerField()
    finished = models.BooleanField(help_text="Whether the line plays the hand to its end.")
    moves = models.JSONField(help_text="The player's moves in order, each as its canonical JSON.")
    method = models.CharField(max_length=16, choices=Method.choices)
    submission = models.ForeignKey(
        Submission,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The ranked result whose line this is, when the method is player.",
    )
    node_budget = models.PositiveIntegerField(help_text="The search's budget of nodes.")
    nodes = models.PositiveIntegerField(help_text="The nodes the search spent.")
    search_result = models.IntegerField(help_text="The best result the search itself found.")
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["-deal"]

    def __str__(self) -> str:
        return f"par {self.result:+d} on {self.deal_id} ({self.method})"
