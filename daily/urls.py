"""The URLs of `daily`, mounted under /api/v1/."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
