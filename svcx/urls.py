"""Routes. Each app adds its /v1 routes with its feature; the catch-all answers the rest."""

from django.contrib import admin
from django.urls import include, path, re_path

from accounts.guards import per_address
from svcx import views

handler400 = "core.handlers.handler400"
handler403 = "core.handlers.handler403"
handler404 = "core.handlers.handler404"
handler500 = "core.handlers.handler500"

admin.site.site_header = "svcx admin"
admin.site.site_title = "svcx admin"
admin.site.index_title = "Staff administration"

urlpatterns = [
    path("v1/health", views.HealthApi.as_view(), name="health"),
    path("v1/openapi.json", views.OpenApiApi.as_view(), name="openapi"),
    path("", include("accounts.urls")),
    path("", include("billing.urls")),
    path("", include("conversion.urls")),
    path("favicon.ico", views.favicon, name="favicon"),
    path("docs/", views.docs_index, name="docs-index"),
    path("docs/errors/<str:code>", views.docs_error, name="docs-error"),
    path("docs/<slug:slug>", views.docs_guide, name="docs-guide"),
    # Before the admin's own routes: the same login view, limited per client address.
    path("admin/login/", per_address("SVCX_LOGIN_ATTEMPTS_PER_MINUTE")(admin.site.login)),
    path("admin/", admin.site.urls),
    # People land in the customer console; the API keeps its JSON answers under /v1.
    path("", views.person_entry, name="root"),
    path("login/", views.person_entry),
    path("console/", include("console.urls")),
    # Must stay last: any other path, any method, is 404 `unknown_endpoint` in the envelope.
    re_path(r"", views.unknown_endpoint),
]
