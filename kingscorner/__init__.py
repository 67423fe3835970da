"""The Kings Corner API project package: settings, URLs, the Celery app and shared API pieces."""

from kingscorner.celery import app as celery_app

__all__ = ["celery_app"]
