"""The admin pages of `daily`: the deals, the attempts at them, the ranked submissions and the per-day result
counts, all of them read-only.

A deal's rules, opponents and seed are what its public commitment commits to, and attempts, submissions and
result counts are history, written together in the transaction of the move that ends a hand. Ranks and
percentiles are counted from the result counts, so a submission changed or deleted here, or a count changed
by hand, would leave the leaderboard counting results that are not there."""

from typing import Any

from django.contrib import admin
from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.utils.safestring import SafeString

from daily.models import Attempt, DailyDeal, DailyPar, ResultCount, Submission
from daily.selectors.reveal import daily_deal_seed_revealed
from games.admin import (
    IdOrTextSearchAdmin,
    ReadOnlyAdmin,
    ReadOnlyTabularInline,
    change_link,
    changelist_link,
    pretty_json,
)
from games.models import Game, Player

# The leaderboard's order, as in Submission's index.
BOARD_ORDER = ["-result", "turns", "finished_at", "id"]


def _count_per_deal(rows: QuerySet[Any]) -> Coalesce:
    """How many of `rows` each deal has, as a subquery: counting two relations through joins in one query
    would multiply their rows."""
    counted = rows.filter(deal=OuterRef("pk")).order_by().values("deal").annotate(count=Count("pk"))
    return Coalesce(Subquery(counted.values("count")), 0)


class ResultCountInline(ReadOnlyTabularInline):
    model = ResultCount
    fields = readonly_fields = (
        "result",
        "count",
    )
    ordering = ["-result"]
    verbose_name_plural = "result counts (what ranks and percentiles are counted from)"


@admin.register(DailyDeal)
class DailyDealAdmin(ReadOnlyAdmin):
    list_display = ["date", "number", "commitment", "attempt_count", "submission_count"]
    date_hierarchy = "date"
    fields = readonly_fields = (
        "date",
        "number",
        "commitment",
        "seed_shown",
        "rules_pretty",
        "opponents_pretty",
        "created_at",
        "attempt_count",
        "submission_count",
    )
    inlines = [ResultCountInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[DailyDeal]:
        deals: QuerySet[DailyDeal] = (
            super()
            .get_queryset(request)
            .annotate(
                attempt_count=_count_per_deal(Attempt.objects.all()),
                submission_count=_count_per_deal(Submission.objects.all()),
            )
        )
        return deals

    @admin.display(description="attempts", ordering="attempt_count")
    def attempt_count(self, deal: DailyDeal) -> SafeString:
        count = deal.attempt_count  # type: ignore[attr-defined]
        return changelist_link(Attempt, f"deal__id__exact={deal.pk}", count)

    @admin.display(description="submissions", ordering="submission_count")
    def submission_count(self, deal: DailyDeal) -> SafeString:
        count = deal.submission_count  # type: ignore[attr-defined]
        return changelist_link(Submission, f"deal__id__exact={deal.pk}", count)

    @admin.display(description="seed")
    def seed_shown(self, deal: DailyDeal) -> str:
        # Operators see it at once, labelled: a ranked attempt's game page shows the same deal in its state.
        if daily_deal_seed_revealed(deal=deal):
            return f"{deal.seed} (public: the day is over)"
        return (
            f"{deal.seed} (secret until the day is over: it reveals the deal every ranked player is playing)"
        )

    @admin.display(description="rules")
    def rules_pretty(self, deal: DailyDeal) -> SafeString:
        return pretty_json(deal.rules)

    @admin.display(description="opponents")
    def opponents_pretty(self, deal: DailyDeal) -> SafeString:
        return pretty_json(deal.opponents)


@admin.register(Attempt)
class AttemptAdmin(IdOrTextSearchAdmin, ReadOnlyAdmin):
    list_display = ["id", "player_link", "deal", "ranked", "started_at", "game_link"]
    list_filter = ["ranked", "deal"]
    list_select_related = ["player", "deal"]
    search_fields = ["player__name", "player__id", "game__id"]
    search_help_text = "A player's name or part of one, or a player's or a game's whole id."
    date_hierarchy = "started_at"
    fields = readonly_fields = (
        "id",
        "player_link",
        "deal",
        "ranked",
        "started_at",
        "game_link",
        "submission_link",
    )

    @admin.display(description="player", ordering="player__name")
    def player_link(self, attempt: Attempt) -> SafeString:
        return change_link(Player, attempt.player_id, attempt.player.name)

    @admin.display(description="game")
    def game_link(self, attempt: Attempt) -> SafeString:
        return change_link(Game, attempt.game_id, attempt.game_id)

    @admin.display(description="submission")
    def submission_link(self, attempt: Attempt) -> SafeString | str:
        submission = Submission.objects.filter(attempt=attempt).first()
        if submission is None:
            return "none" if attempt.ranked else "none: unranked"
        return change_link(Submission, submission.pk, f"{submission.result:+d}")


@admin.register(Submission)
class SubmissionAdmin(IdOrTextSearchAdmin, ReadOnlyAdmin):
    list_display = ["deal", "player_link", "result", "turns", "finished_at"]
    list_filter = ["deal", "finished_at"]
    list_select_related = ["deal", "player"]
    search_fields = ["player__name", "player__id"]
    search_help_text = "A player's name or part of one, or a player's whole id."
    fields = readonly_fields = (
        "deal",
        "player_link",
        "result",
        "turns",
        "finished_at",
        "attempt_link",
        "game_link",
    )

    def get_ordering(self, request: HttpRequest) -> list[str]:
        # One day's submissions in the leaderboard's order; across days, the latest day first.
        return BOARD_ORDER if "deal__id__exact" in request.GET else ["-deal__date", *BOARD_ORDER]

    @admin.display(description="player", ordering="player__name")
    def player_link(self, submission: Submission) -> SafeString:
        return change_link(Player, submission.player_id, submission.player.name)

    @admin.display(description="attempt")
    def attempt_link(self, submission: Submission) -> SafeString:
        return change_link(Attempt, submission.attempt_id, submission.attempt_id)

    @admin.display(description="game")
    def game_link(self, submission: Submission) -> SafeString:
        game_id = submission.attempt.game_id
        return change_link(Game, game_id, game_id)


@admin.register(ResultCount)
class ResultCountAdmin(ReadOnlyAdmin):
    list_display = ["deal", "result", "count"]
    list_filter = ["deal"]
    list_select_related = ["deal"]
    ordering = ["-deal__date", "-result"]


@admin.register(DailyPar)
class DailyParAdmin(ReadOnlyAdmin):
    """Each day's par, computed only once its seed is revealed; `manage.py daily_par` recomputes it."""

    list_display = ["deal", "result", "turns", "method", "search_result", "nodes", "computed_at"]
    list_filter = ["method"]
    list_select_related = ["deal"]
    ordering = ["-deal__date"]
    fields = readonly_fields = (
        "deal",
        "result",
        "turns",
        "finished",
        "method",
        "submission",
        "search_result",
        "node_budget",
        "nodes",
        "computed_at",
        "moves_pretty",
    )

    @admin.display(description="moves")
    def moves_pretty(self, par: DailyPar) -> SafeString:
        return pretty_json(par.moves)
