"""The admin pages of `daily`."""

from django.contrib import admin
from django.http import HttpRequest

from daily.models import Attempt, DailyDeal, ResultCount, Submission


@admin.register(DailyDeal)
class DailyDealAdmin(admin.ModelAdmin):
    list_display = ["date", "number", "commitment", "created_at"]
    # The seed stays out of the admin: it is secret until the day is over.
    exclude = ["seed"]
    readonly_fields = ["date", "number", "rules", "opponents", "commitment", "created_at"]


@admin.register(Attempt)
class AttemptAdmin(admin.ModelAdmin):
    list_display = ["id", "deal", "player", "ranked", "started_at"]
    list_filter = ["ranked"]
    raw_id_fields = ["player", "deal", "game"]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Submissions and result counts are written together by the service only; edits would set them apart."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Submission)
class SubmissionAdmin(ReadOnlyAdmin):
    list_display = ["id", "deal", "player", "result", "turns", "finished_at"]
    raw_id_fields = ["attempt", "player", "deal"]


@admin.register(ResultCount)
class ResultCountAdmin(ReadOnlyAdmin):
    list_display = ["deal", "result", "count"]
    raw_id_fields = ["deal"]
