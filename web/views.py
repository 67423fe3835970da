"""The web client's page shells: HTML that names the page's script module, and nothing of a player or a game.
What a page shows it reads from the public API in the browser, with the player's token, as a third-party
client would; no view here imports the games or daily apps (tests/test_layers.py)."""

from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.loader import render_to_string
from django.views.generic import TemplateView

# The pages run only their own scripts and styles, from this origin, and talk only to it (the API is the same
# origin, so its CORS stays as it is). No inline script or style, no plug-ins, no framing, no <base>.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "manifest-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "object-src 'none'",
    )
)


class Page(TemplateView):
    """A page shell: its template, its script module and its title, with the pages' security policy."""

    script = ""
    title = ""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(script=f"web/js/{self.script}", title=self.title)
        return context

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        return _under_policy(super().dispatch(request, *args, **kwargs))


def _under_policy(response: HttpResponseBase) -> HttpResponseBase:
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    # A join link's code is in the page's URL: it is never sent on as a referrer.
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-cache"
    return response


def not_found(request: HttpRequest) -> HttpResponseBase:
    """What a person gets at an address under /play/ that is no page (a link cut short or mistyped): a page
    that says so and leads to the play page, not the API's problem document. It runs no script."""
    body = render_to_string("web/not_found.html", {"title": "Not found"}, request=request)
    return _under_policy(HttpResponse(body, status=404))


class LobbyPage(Page):
    template_name = "web/lobby.html"
    script = "lobby.js"
    title = "Play"


class TablePage(Page):
    template_name = "web/table.html"
    script = "table.js"
    title = "Table"


class JoinPage(Page):
    template_name = "web/join.html"
    script = "join.js"
    title = "Join a table"


class DailyPage(Page):
    template_name = "web/daily.html"
    script = "daily.js"
    title = "Daily deal"
