from django.urls import path

from ingestion import views

urlpatterns = [
    path("", views.home, name="home"),
    path("notes/", views.note_create, name="note_create"),
    path("sources/<int:source_id>/", views.source_detail, name="source_detail"),
]
