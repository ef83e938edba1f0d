from django.apps import AppConfig


class IngestionConfig(AppConfig):
    name = "ingestion"

    def ready(self) -> None:
        from ingestion import signals  # noqa: F401 — connects the receivers
