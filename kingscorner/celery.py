"""The Celery app; its configuration is the CELERY_* names of the Django settings."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kingscorner.settings")

app = Celery("kingscorner")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
