"""The project's URLs: the versioned API with its index, OpenAPI schema and docs, the web client's pages
(/play/), and the admin."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponseBase
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularSwaggerView

from kingscorner.api import errors
from kingscorner.api.health import HealthApi
from kingscorner.api.index import ApiIndexApi
from kingscorner.api.schema import SchemaApi
from web.views import not_found

admin.site.site_header = admin.site.site_title = "Kings Corner API administration"

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="docs"), name="root"),
    path("api/v1/", ApiIndexApi.as_view(), name="api-index"),
    path("api/v1/health", HealthApi.as_view(), name="health"),
    path("api/v1/schema/", SchemaApi.as_view(), name="schema"),
    path("api/v1/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/v1/", include("games.apis.urls")),
    path("api/v1/", include("daily.apis.urls")),
    path("play/", include("web.urls")),
    path("admin/", admin.site.urls),
]

handler400 = "kingscorner.api.errors.bad_request"


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponseBase:
    """A missing address under the web client's /play/ is a page a person can act on; anywhere else, the
    API's problem (404 `not_found`)."""
    if request.path.startswith("/play/"):
        return not_found(request)
    return errors.page_not_found(request, exception)


handler404 = page_not_found
handler500 = "kingscorner.api.errors.server_error"
