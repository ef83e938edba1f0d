from django.contrib import admin
from django.urls import include, path

from secondbrain.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("accounts/", include("accounts.urls")),
    path("chat/", include("chat.urls")),
    path("", include("ingestion.urls")),
]
