"""The web client's pages, mounted under /play/."""

from django.urls import path

from web import views

urlpatterns = [
    path("", views.LobbyPage.as_view(), name="play"),
    path("games/<uuid:game_id>", views.TablePage.as_view(), name="play-game"),
    path("join/<str:code>", views.JoinPage.as_view(), name="play-join"),
    path("daily/", views.DailyPage.as_view(), name="play-daily"),
    path("daily/<str:day>", views.DailyPage.as_view(), name="play-daily-day"),
]
