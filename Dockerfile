# The one image of the service: the web (gunicorn), the event streams (uvicorn), the Celery worker, Celery beat
# and the migrate job.
#
# Two stages. The first has a C compiler, so that setup.py compiles the engine (games/engine) with mypyc into
# the wheel, beside the guides' site it builds: python:3.11-slim has none, and an image built without one runs
# the engine as pure Python, a sharp decision at about ten times the CPU. The second installs that wheel
# alone, without the compiler or the sources: the service runs from site-packages, where the compiled modules
# are (a copy of games/ in the working directory would shadow them with the pure-Python ones).
FROM python:3.11-slim AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# setup.py builds the guides (docs/, mkdocs.yml, the README's start) into the site served under /docs/.
COPY pyproject.toml setup.py mkdocs.yml README.md ./
COPY kingscorner ./kingscorner
COPY games ./games
COPY daily ./daily
COPY web ./web
COPY docs ./docs
RUN pip wheel --no-deps --wheel-dir /wheels .

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

COPY --from=build /wheels /wheels
COPY manage.py ./

# The build fails here if the engine did not come compiled, with sharp's search and play-outs, the legal moves
# and the shuffle in C.
RUN pip install /wheels/*.whl \
    && rm -rf /wheels \
    && python -c "import games.engine as engine; assert engine.BUILD == 'mypyc', engine.BUILD" \
    && python -c "from games.engine.players import search; assert search.NATIVE is not None" \
    && python -c "from games.engine.players import rollout; assert rollout.NATIVE_PLAY_OUT is not None" \
    && python -c "from games.engine import deal, game; assert game.NATIVE_POSITION_MOVES and deal.NATIVE_SHUFFLE" \
    && SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
    && useradd --system --uid 10001 --home-dir /app kingscorner \
    && chown -R kingscorner /app

USER kingscorner

EXPOSE 8000

CMD ["gunicorn", "kingscorner.wsgi", "--config", "python:kingscorner.gunicorn_conf"]
