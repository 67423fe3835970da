"""The WSGI application that gunicorn serves: `gunicorn kingscorner.wsgi`."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kingscorner.settings")

application = get_wsgi_application()
