"""The admin pages of `games`."""

from django.contrib import admin

from games.models import Game, GameEvent, GameMove, IdempotentRequest, Player


@admin.register(Player)
class PlayerAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "created_at"]
    search_fields = ["name", "id"]
    readonly_fields = ["token_hash", "created_at", "token_rotated_at"]


@admin.register(Game)
class GameAdmin(admin.ModelAdmin):
    list_display = ["id", "player", "status", "hand_number", "version", "created_at"]
    list_filter = ["status"]
    raw_id_fields = ["player"]


@admin.register(GameMove)
class GameMoveAdmin(admin.ModelAdmin):
    list_display = ["game", "seq", "hand_number", "seat", "move", "version"]
    raw_id_fields = ["game"]


@admin.register(GameEvent)
class GameEventAdmin(admin.ModelAdmin):
    list_display = ["game", "seq", "type", "version"]
    raw_id_fields = ["game"]


@admin.register(IdempotentRequest)
class IdempotentRequestAdmin(admin.ModelAdmin):
    list_display = ["player", "key", "status_code", "created_at"]
    raw_id_fields = ["player"]
