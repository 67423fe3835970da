"""The URLs of the games API, mounted under /api/v1/."""

from django.urls import path

from games.apis.analysis import AnalysisApi
from games.apis.games import GameCollectionApi, GameDetailApi, GameEventsApi
from games.apis.hint import GameHintApi
from games.apis.moves import GameHandDealApi, GameMovesApi
from games.apis.person_stream import PersonStreamApi, PersonStreamTicketApi
from games.apis.players import PlayerCreateApi, PlayerMeApi, PlayerTokenRotateApi
from games.apis.rules import RulesApi, RulesDocumentApi
from games.apis.streams import GameStreamApi, GameStreamTicketApi
from games.apis.tables import (
    GameInvitationApi,
    GameLeaveApi,
    GameRematchApi,
    GameSeatReplaceApi,
    GameStartApi,
    InvitationJoinApi,
)

urlpatterns = [
    path("players", PlayerCreateApi.as_view(), name="player-create"),
    path("players/me", PlayerMeApi.as_view(), name="player-me"),
    path("players/me/token", PlayerTokenRotateApi.as_view(), name="player-token"),
    path("players/me/stream-tickets", PersonStreamTicketApi.as_view(), name="person-stream-tickets"),
    path("players/me/stream", PersonStreamApi.as_view(), name="person-stream"),
    path("games", GameCollectionApi.as_view(), name="games"),
    path("games/<uuid:game_id>", GameDetailApi.as_view(), name="game-detail"),
    path("games/<uuid:game_id>/moves", GameMovesApi.as_view(), name="game-moves"),
    path("games/<uuid:game_id>/hands", GameHandDealApi.as_view(), name="game-hands"),
    path("games/<uuid:game_id>/events", GameEventsApi.as_view(), name="game-events"),
    path("games/<uuid:game_id>/hint", GameHintApi.as_view(), name="game-hint"),
    path("games/<uuid:game_id>/start", GameStartApi.as_view(), name="game-start"),
    path("games/<uuid:game_id>/invitation", GameInvitationApi.as_view(), name="game-invitation"),
    path("games/<uuid:game_id>/leave", GameLeaveApi.as_view(), name="game-leave"),
    path("games/<uuid:game_id>/rematch", GameRematchApi.as_view(), name="game-rematch"),
    path(
        "games/<uuid:game_id>/seats/<int:seat>/replace",
        GameSeatReplaceApi.as_view(),
        name="game-seat-replace",
    ),
    # Any string after invitations/, slashes too: what no code can be is the view's 404 invitation_not_found.
    path("invitations/<path:code>", InvitationJoinApi.as_view(), name="invitation-join"),
    path("games/<uuid:game_id>/stream-tickets", GameStreamTicketApi.as_view(), name="game-stream-tickets"),
    path("games/<uuid:game_id>/stream", GameStreamApi.as_view(), name="game-stream"),
    path("analysis", AnalysisApi.as_view(), name="analysis"),
    path("rules", RulesApi.as_view(), name="rules"),
    path("rules.md", RulesDocumentApi.as_view(), name="rules-document"),
]
