"""The web client's page shells, without a browser: each page is served under its Content-Security-Policy,
names only its own script module and style sheet (no inline script, style or event handler), has a title, a
language and a main landmark, and every module it loads, and every module those import, is served; the
scripts call only this origin's API and never put a token in a URL."""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.test import Client

from web.views import CONTENT_SECURITY_POLICY

STATIC = Path(__file__).resolve().parents[2] / "web" / "static" / "web"
PAGES = [
    "/play/",
    "/play/games/4c993eaf-1c1b-4b9e-9d55-3a3b6f1e2a7d",
    "/play/join/Qk1sY0dViWq3Xr8nT2bLz5HfJm9uEo4A",
    "/play/daily/",
    "/play/daily/2026-12-01",
]
IMPORT = re.compile(r"""^import .* from "(\./[a-z-]+\.js)";$""", re.MULTILINE)


class Shell(HTMLParser):
    """What a page's HTML holds that the policy governs."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.styles: list[str] = []
        self.inline: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self._in_script = False
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        self.inline += [f"{tag}[{name}]" for name in attributes if name == "style" or name.startswith("on")]
        if tag == "script":
            self.scripts.append(attributes)
            self._in_script = True
        if tag == "style":
            self.inline.append("<style>")
        if tag == "link" and attributes.get("rel") == "stylesheet":
            self.styles.append(str(attributes["href"]))
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = self._in_script and tag != "script"
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline.append("<script> with a body")
        if self._in_title:
            self.title += data


def _shell(client: Client, path: str) -> tuple[Shell, dict[str, str]]:
    response = client.get(path)
    assert response.status_code == 200, path
    assert response["Content-Type"].startswith("text/html")
    shell = Shell()
    shell.feed(response.content.decode())
    return shell, dict(response.headers)


@pytest.mark.parametrize("path", PAGES)
def test_a_page_is_a_shell_under_its_policy_with_its_own_module_and_no_inline_code(path: str) -> None:
    client = Client()
    shell, headers = _shell(client, path)
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY and "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert headers["Referrer-Policy"] == "no-referrer"
    assert shell.inline == []
    assert [(script.get("type"), bool(script.get("src"))) for script in shell.scripts] == [("module", True)]
    assert shell.title.endswith("· Kings Corner")
    assert ("html", {"lang": "en"}) in shell.tags
    assert any(tag == "main" for tag, _ in shell.tags)
    for url in [str(shell.scripts[0]["src"]), *shell.styles]:
        assert client.get(url).status_code == 200, url


def test_the_pages_know_nothing_of_a_player_or_a_game_until_their_script_asks_the_api() -> None:
    client = Client()
    shell, _ = _shell(client, PAGES[1])
    assert ("body", {"data-game": PAGES[1].rsplit("/", 1)[1]}) in shell.tags
    page = client.get(PAGES[1]).content.decode()
    assert "kc_" not in page and "hand" not in page.split("<main", 1)[0]


def test_every_module_a_script_imports_is_there() -> None:
    modules = sorted((STATIC / "js").glob("*.js"))
    assert modules
    for module in modules:
        for imported in IMPORT.findall(module.read_text()):
            assert (module.parent / imported).is_file(), f"{module.name} imports {imported}"


def test_the_scripts_call_only_this_origins_api_and_never_put_a_token_in_a_url() -> None:
    for module in sorted((STATIC / "js").glob("*.js")):
        text = module.read_text()
        assert not re.search(r"https?://", text), module.name
        assert not re.search(r"[?&](token|access_token)=", text), module.name
        # The token is kept in one module and sent in the Authorization header only.
        if "localStorage" in text:
            assert module.name in ("identity.js", "person-feed.js"), module.name


NO_PAGES = ["/play/games/not-a-game", "/play/join/", "/play/nowhere", "/play/daily/x/y"]


@pytest.mark.parametrize("path", NO_PAGES)
def test_an_address_under_play_that_is_no_page_is_a_page_that_says_so_and_leads_to_the_play_page(
    path: str,
) -> None:
    """A link cut short or mistyped lands a person on a page they can act on, under the pages' policy; an
    address outside /play/ stays the API's problem."""
    response = Client().get(path)
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")
    assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert response["Referrer-Policy"] == "no-referrer"
    shell = Shell()
    shell.feed(response.content.decode())
    assert shell.inline == [] and shell.scripts == []
    assert shell.title == "Not found · Kings Corner"
    assert ("a", {"href": "/play/"}) in shell.tags
    outside = Client().get("/api/v1/nowhere")
    assert outside.status_code == 404 and outside.json()["code"] == "not_found"
