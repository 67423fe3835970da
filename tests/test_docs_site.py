"""The guides' site: the install builds docs/ with MkDocs into kingscorner/web_root/docs/ (setup.py), and the
app serves it under /docs/ through WhiteNoise, every guide at its own folder, whatever else is installed."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.http import FileResponse
from django.http.response import HttpResponseBase
from django.test import Client

from tests.support.ci import IN_CI

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(settings.WHITENOISE_ROOT) / "docs"
GUIDES = sorted((ROOT / "docs").glob("*.md"))


@pytest.fixture(autouse=True)
def _built_site() -> None:
    if not (SITE / "index.html").is_file():
        message = f"the guides' site is not built at {SITE}: `pip install -e .` builds it"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


def _body(response: HttpResponseBase) -> str:
    """A file WhiteNoise serves is streamed."""
    assert isinstance(response, FileResponse)
    return b"".join(response.streaming_content).decode()  # type: ignore[arg-type]


def _page(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    assert response["Content-Type"].startswith("text/html"), url
    return _body(response)


def _title(guide: Path) -> str:
    heading = next(line for line in guide.read_text(encoding="utf-8").splitlines() if line.startswith("# "))
    return heading.removeprefix("# ").replace("`", "")


def test_every_guide_is_served_under_docs_at_its_own_folder(client: Client) -> None:
    assert len(GUIDES) >= 10
    for guide in GUIDES:
        url = "/docs/" if guide.stem == "index" else f"/docs/{guide.stem}/"
        page = _page(client, url)
        shown = re.sub(r"<[^>]+>", "", page)
        assert _title(guide) in shown, (url, _title(guide))


def test_the_site_is_built_from_the_guides_as_they_are_now() -> None:
    # An edited guide whose page was not built again would be served stale: `pip install -e .` rebuilds it.
    for guide in GUIDES:
        built = SITE / ("index.html" if guide.stem == "index" else f"{guide.stem}/index.html")
        assert built.stat().st_mtime >= guide.stat().st_mtime, f"{built} is older than {guide}"
    # The start page and docs/operations.md include the README's walkthrough and environment table.
    readme = (ROOT / "README.md").stat().st_mtime
    for built in (SITE / "index.html", SITE / "operations" / "index.html"):
        assert built.stat().st_mtime >= readme, f"{built} is older than README.md"


def test_a_folder_without_its_slash_is_redirected_and_an_unknown_page_is_a_problem(client: Client) -> None:
    assert client.get("/docs").headers["Location"].endswith("docs/")
    assert client.get("/docs/api").headers["Location"].endswith("api/")
    missing = client.get("/docs/no-such-guide/")
    assert missing.status_code == 404 and missing["Content-Type"] == "application/problem+json"
    assert missing.json()["code"] == "not_found"


def test_the_site_serves_its_assets_and_search_index(client: Client) -> None:
    page = _page(client, "/docs/")
    stylesheet = re.search(r'href="(assets/stylesheets/main\.[^"]+\.css)"', page)
    assert stylesheet is not None
    assert client.get(f"/docs/{stylesheet.group(1)}").status_code == 200
    search = client.get("/docs/search/search_index.json")
    assert search.status_code == 200
    assert "Rate limits" in _body(search)
