from django.urls import path

from ingestion import views

urlpatterns = [
    path("", views.home, name="home"),
    path("notes/", views.note_create, name="note_create"),
    path("uploads/", views.upload_create, name="upload_create"),
    path("web-pages/", views.web_page_create, name="web_page_create"),
    path("jobs/<int:job_id>/cancel/", views.job_cancel, name="job_cancel"),
    path("sources/<int:source_id>/", views.source_detail, name="source_detail"),
    path("sources/<int:source_id>/file", views.source_file, name="source_file"),
    path("sources/<int:source_id>/reprocess/", views.source_reprocess, name="source_reprocess"),
    path("sources/<int:source_id>/private/", views.source_private, name="source_private"),
    path("sources/<int:source_id>/delete/", views.source_delete, name="source_delete"),
]
