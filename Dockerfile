# The one image of the service: the web (gunicorn), the event streams (uvicorn), the Celery worker, Celery beat
# and the migrate job.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# setup.py builds the guides (docs/, mkdocs.yml, the README's start) into the site served under /docs/.
COPY pyproject.toml setup.py mkdocs.yml README.md ./
COPY kingscorner ./kingscorner
COPY games ./games
COPY daily ./daily
COPY web ./web
COPY docs ./docs
COPY manage.py ./

RUN pip install . \
    && SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
    && useradd --system --uid 10001 --home-dir /app kingscorner \
    && chown -R kingscorner /app

USER kingscorner

EXPOSE 8000

CMD ["gunicorn", "kingscorner.wsgi", "--config", "python:kingscorner.gunicorn_conf"]
