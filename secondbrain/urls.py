from django.contrib import admin
from django.urls import include, path

from accounts.views import settings_page
from chat.views import search
from secondbrain.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("accounts/", include("accounts.urls")),
    path("settings/", settings_page, name="settings"),
    path("search/", search, name="search"),
    path("chat/", include("chat.urls")),
    path("", include("ingestion.urls")),
]
