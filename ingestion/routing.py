from django.urls import path

from ingestion.consumers import JobsConsumer

websocket_urlpatterns = [path("ws/jobs/", JobsConsumer.as_asgi())]
