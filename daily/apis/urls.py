"""The URLs of the daily API, mounted under /api/v1/."""

from django.urls import path

from daily.apis import daily as apis

urlpatterns = [
    path("daily", apis.DailyTodayApi.as_view(), name="daily-today"),
    path("daily/anchor", apis.DailyAnchorApi.as_view(), name="daily-anchor"),
    path("daily/commitments", apis.DailyCommitmentsApi.as_view(), name="daily-commitments"),
    path("daily/<str:day>", apis.DailyDayApi.as_view(), name="daily-day"),
    path("daily/<str:day>/attempts", apis.DailyAttemptCreateApi.as_view(), name="daily-attempt-create"),
    path("daily/<str:day>/leaderboard", apis.DailyLeaderboardApi.as_view(), name="daily-leaderboard"),
    path("daily/<str:day>/par", apis.DailyParApi.as_view(), name="daily-par"),
    path("daily/<str:day>/leaderboard/me", apis.DailyLeaderboardMeApi.as_view(), name="daily-leaderboard-me"),
    path("players/me/daily", apis.PlayerDailyHistoryApi.as_view(), name="player-daily-history"),
]
