from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from accounts.urls import settings_urlpatterns
from chat.views import search
from secondbrain.api import api
from secondbrain.views import metrics_page

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("accounts/", include("accounts.urls")),
    path("settings/", include(settings_urlpatterns)),
    path("search/", search, name="search"),
    path("metrics", metrics_page, name="metrics"),
    # Pages without our <link rel="icon"> (the admin's, the API's docs): browsers ask for /favicon.ico.
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
    path("chat/", include("chat.urls")),
    path("", include("ingestion.urls")),
]
