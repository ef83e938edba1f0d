from django.contrib import admin
from django.urls import include, path

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
    path("chat/", include("chat.urls")),
    path("", include("ingestion.urls")),
]
