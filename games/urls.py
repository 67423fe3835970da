"""The URLs of `games`, mounted under /api/v1/."""

from django.urls import path

from games import apis, rules_apis

urlpatterns = [
    path("players", apis.PlayerCreateApi.as_view(), name="player-create"),
    path("players/me", apis.PlayerMeApi.as_view(), name="player-me"),
    path("players/me/token", apis.PlayerTokenRotateApi.as_view(), name="player-token"),
    path("games", apis.GameCollectionApi.as_view(), name="games"),
    path("games/<uuid:game_id>", apis.GameDetailApi.as_view(), name="game-detail"),
    path("games/<uuid:game_id>/moves", apis.GameMovesApi.as_view(), name="game-moves"),
    path("games/<uuid:game_id>/hands", apis.GameHandDealApi.as_view(), name="game-hands"),
    path("games/<uuid:game_id>/events", apis.GameEventsApi.as_view(), name="game-events"),
    path("games/<uuid:game_id>/hint", apis.GameHintApi.as_view(), name="game-hint"),
    path("analysis", apis.AnalysisApi.as_view(), name="analysis"),
    path("rules", rules_apis.RulesApi.as_view(), name="rules"),
    path("rules.md", rules_apis.RulesDocumentApi.as_view(), name="rules-document"),
]
