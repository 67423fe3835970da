"""The admin pages of `games`: players (never their tokens), games with their state and logs, and the replayed
responses of idempotent requests, with the read-only base and the helpers that `daily`'s pages share.

Only a player's name can be changed here. Everything else is written by the services, which keep a game's
snapshot, its version and its logs in step: an edit here would set them apart, and a game would no longer
replay from its seed and its move log."""

import json
import uuid
from typing import Any

from django.contrib import admin
from django.db import models
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from games import hooks, services
from games.engine import PRESETS
from games.engine.players import LEVELS, NAMES
from games.models import Game, GameEvent, GameHand, GameMove, GameSeat, IdempotentRequest, Player

RECENT_GAMES = 10
# The types written to the logs by the engine (games/engine/game.py); fixed lists, so that the filters need no
# scan of the logs for the distinct values.
MOVE_TYPES = ("deal", "play", "move_pile", "end_turn")
EVENT_TYPES = ("deal", "turn_start", "draw", "play", "move_pile", "end_turn", "hand_over", "game_over")


# --- shared by the admin pages of `games` and `daily` -------------------------------------------------------


def change_link(model: type[models.Model], pk: Any, label: object) -> SafeString:
    """A link to the admin page of one row, from its primary key alone, so that no row is loaded for it."""
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[pk])
    return format_html('<a href="{}">{}</a>', url, label)


def changelist_link(model: type[models.Model], query: str, label: object) -> SafeString:
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    return format_html('<a href="{}?{}">{}</a>', url, query, label)


def pretty_json(value: Any) -> SafeString:
    return format_html('<pre style="margin: 0">{}</pre>', json.dumps(value, indent=2))


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    """A page to read, filter and search, where no one adds, changes or deletes a row."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False


class ReadOnlyTabularInline(admin.TabularInline[Any, Any]):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False


class IdOrTextSearchAdmin(admin.ModelAdmin[Any]):
    """Search where a term that is a whole UUID matches the UUID fields of `search_fields` exactly, through
    their indexes, and any term matches the text fields by substring. (Django's own search would compare
    every row's id as text.)"""

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        term = search_term.strip()
        if not term:
            return queryset, False
        try:
            wanted: uuid.UUID | None = uuid.UUID(term)
        except ValueError:
            wanted = None
        matches = Q()
        for path in self.get_search_fields(request):
            if isinstance(_field_at(queryset.model, path), models.UUIDField):
                if wanted is not None:
                    matches |= Q(**{path: wanted})
            else:
                matches |= Q(**{f"{path}__icontains": term})
        return (queryset.filter(matches) if matches else queryset.none()), False


def _field_at(model: type[models.Model], path: str) -> Any:
    field: Any = None
    for name in path.split("__"):
        field = model._meta.get_field(name)
        if field.is_relation:
            model = field.related_model
    return field


# --- players ------------------------------------------------------------------------------------------------


@admin.register(Player)
class PlayerAdmin(IdOrTextSearchAdmin):
    list_display = ["name", "id", "created_at", "token_rotated_at", "game_count"]
    search_fields = ["name", "id"]
    search_help_text = "A name or part of one, or a player's whole id."
    date_hierarchy = "created_at"
    # The token's hash is never shown: it is a credential. Players come only from the API, which issues the
    # token, so there is no add page either.
    exclude = ["token_hash"]
    fields = ["id", "name", "created_at", "token_rotated_at", "game_count", "recent_games"]
    readonly_fields = ["id", "created_at", "token_rotated_at", "game_count", "recent_games"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Player, form: Any, change: bool) -> None:
        """A new name is a new skeleton: the rename keeps the discriminator apart from look-alikes."""
        services.player_rename(player=obj, name=obj.name)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Player]:
        players: QuerySet[Player] = super().get_queryset(request).annotate(game_count=Count("games"))
        return players

    @admin.display(description="games", ordering="game_count")
    def game_count(self, player: Player) -> int:
        count: int = player.game_count  # type: ignore[attr-defined]
        return count

    @admin.display(description=f"recent games (the last {RECENT_GAMES})")
    def recent_games(self, player: Player) -> SafeString:
        games = player.games.order_by("-created_at", "-id")[:RECENT_GAMES]
        rows = format_html_join(
            "",
            "<li>{} {}, hand {}, version {}, created {}</li>",
            (
                (
                    change_link(Game, game.pk, game.pk),
                    game.status,
                    game.hand_number,
                    game.version,
                    formats.localize(timezone.localtime(game.created_at)),
                )
                for game in games
            ),
        )
        everything = changelist_link(Game, f"player={player.pk}", "all of the player's games")
        return format_html('<ul style="margin: 0; padding: 0">{}</ul>{}', rows, everything)


# --- games --------------------------------------------------------------------------------------------------


class RulesPresetFilter(admin.SimpleListFilter):
    title = "rule set"
    parameter_name = "rules_preset"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [(preset, preset) for preset in PRESETS]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Game]) -> QuerySet[Game]:
        if self.value() is None:
            return queryset
        return queryset.filter(rules__preset=self.value())


class OpponentLevelFilter(admin.SimpleListFilter):
    title = "an opponent's level"
    parameter_name = "opponent_level"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [(level, level) for level in LEVELS]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Game]) -> QuerySet[Game]:
        level = self.value()
        if level is None:
            return queryset
        # `opponents` is a list by seat; a lookup by index works alike on PostgreSQL and SQLite.
        at_level = Q()
        for index in range(len(NAMES)):
            at_level |= Q(**{f"opponents__{index}__level": level})
        return queryset.filter(at_level)


class GameMoveInline(ReadOnlyTabularInline):
    model = GameMove
    fields = readonly_fields = (
        "seq",
        "hand_number",
        "seat",
        "move",
        "version",
        "created_at",
    )
    ordering = ["seq"]
    verbose_name_plural = "move log"


class GameSeatInline(ReadOnlyTabularInline):
    model = GameSeat
    fields = readonly_fields = ("seat", "kind", "player", "name", "level", "joined_at")
    ordering = ["seat"]
    verbose_name_plural = "seats"


class GameHandInline(ReadOnlyTabularInline):
    model = GameHand
    fields = readonly_fields = (
        "hand_number",
        "result",
        "created_at",
    )
    ordering = ["hand_number"]
    verbose_name_plural = "finished hands"


@admin.register(Game)
class GameAdmin(IdOrTextSearchAdmin, ReadOnlyAdmin):
    list_display = [
        "id",
        "player_link",
        "status",
        "hand_number",
        "target_score",
        "rule_set",
        "opponent_levels",
        "version",
        "created_at",
        "updated_at",
        "finished_at",
    ]
    list_filter = ["status", RulesPresetFilter, OpponentLevelFilter, "created_at"]
    list_select_related = ["player"]
    search_fields = ["id", "player__name", "player__id"]
    search_help_text = "A game's or a player's whole id, or a player's name or part of one."
    date_hierarchy = "created_at"
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "id",
                    "player_link",
                    "status",
                    "hand_number",
                    "target_score",
                    "version",
                    "created_at",
                    "updated_at",
                    "finished_at",
                    "event_log",
                ]
            },
        ),
        ("Rules and opponents", {"fields": ["rules_pretty", "opponents_pretty"]}),
        (
            "Hidden from the player",
            {
                "description": (
                    "The seed and the state show every hand and the order of the stock. They are here for "
                    "operators to look after the game: never pass them on while the player may not see them."
                ),
                "fields": ["seed_shown", "state_pretty"],
            },
        ),
    ]
    readonly_fields = [str(name) for _, options in fieldsets for name in options["fields"]]
    inlines = [GameSeatInline, GameHandInline, GameMoveInline]

    @admin.display(description="player", ordering="player__name")
    def player_link(self, game: Game) -> SafeString:
        return change_link(Player, game.player_id, game.player.name)

    @admin.display(description="rule set")
    def rule_set(self, game: Game) -> str:
        return str(game.rules.get("preset", ""))

    @admin.display(description="opponents' levels")
    def opponent_levels(self, game: Game) -> str:
        return ", ".join(str(opponent.get("level") or "person") for opponent in game.opponents)

    @admin.display(description="rules")
    def rules_pretty(self, game: Game) -> SafeString:
        return pretty_json(game.rules)

    @admin.display(description="opponents")
    def opponents_pretty(self, game: Game) -> SafeString:
        return pretty_json(game.opponents)

    @admin.display(description="event log")
    def event_log(self, game: Game) -> SafeString:
        # The logs can run to thousands of rows, so the events are a link to their own paged list.
        return changelist_link(GameEvent, f"game={game.pk}", f"{game.event_seq} events")

    @admin.display(description="seed")
    def seed_shown(self, game: Game) -> str:
        if game.status == Game.Status.FINISHED and hooks.seed_may_be_revealed(game):
            return f"{game.seed} (the player sees it too: the game is over)"
        return f"{game.seed} (secret: the player does not see it yet)"

    @admin.display(description="state (the engine's snapshot at this version)")
    def state_pretty(self, game: Game) -> SafeString:
        return pretty_json(game.state)


# --- the logs -----------------------------------------------------------------------------------------------


class LogTypeFilter(admin.SimpleListFilter):
    """Filters log rows by their type (`field`), offering a fixed list of types."""

    title = "type"
    parameter_name = "type"
    field: str
    types: tuple[str, ...]

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [(name, name) for name in self.types]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() is None:
            return queryset
        return queryset.filter(**{self.field: self.value()})


class MoveTypeFilter(LogTypeFilter):
    field = "move__type"
    types = MOVE_TYPES


class EventTypeFilter(LogTypeFilter):
    field = "type"
    types = EVENT_TYPES


class GameLogAdmin(IdOrTextSearchAdmin, ReadOnlyAdmin):
    """A log of games, which is history: changing or deleting a row would make its game replay differently
    from how it was played. Listed newest first; one game's log (`?game=<id>`) in order of seq."""

    search_fields = ["game__id"]
    search_help_text = "A game's whole id."
    # Counting the whole log for every filtered page would scan it.
    show_full_result_count = False

    def get_ordering(self, request: HttpRequest) -> list[str]:
        return ["seq"] if "game" in request.GET else ["-id"]

    @admin.display(description="game", ordering="game_id")
    def game_link(self, row: GameMove | GameEvent) -> SafeString:
        return change_link(Game, row.game_id, row.game_id)


@admin.register(GameMove)
class GameMoveAdmin(GameLogAdmin):
    list_display = ["game_link", "seq", "hand_number", "seat", "move", "version", "created_at"]
    list_filter = [MoveTypeFilter, "seat"]
    fields = readonly_fields = (
        "game_link",
        "seq",
        "hand_number",
        "seat",
        "move",
        "version",
        "created_at",
    )


@admin.register(GameEvent)
class GameEventAdmin(GameLogAdmin):
    list_display = ["game_link", "seq", "type", "data", "version", "created_at"]
    list_filter = [EventTypeFilter]
    fields = readonly_fields = (
        "game_link",
        "seq",
        "type",
        "data",
        "version",
        "created_at",
    )


@admin.register(IdempotentRequest)
class IdempotentRequestAdmin(IdOrTextSearchAdmin, ReadOnlyAdmin):
    """What a retry of a request is answered with; editing it would answer a retry with something else than
    the first response."""

    list_display = ["key", "player_link", "kind", "created_at"]
    list_filter = ["kind", "created_at"]
    list_select_related = ["player"]
    search_fields = ["key", "player__name", "player__id"]
    search_help_text = "An Idempotency-Key or a player's name, or part of one; or a player's whole id."
    fields = readonly_fields = (
        "key",
        "player_link",
        "fingerprint",
        "kind",
        "created_at",
        "response_pretty",
    )

    @admin.display(description="player", ordering="player__name")
    def player_link(self, request_row: IdempotentRequest) -> SafeString:
        return change_link(Player, request_row.player_id, request_row.player.name)

    @admin.display(description="response")
    def response_pretty(self, request_row: IdempotentRequest) -> SafeString:
        return pretty_json(request_row.response)
