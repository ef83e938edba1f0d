from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from secondbrain.local_models import prepare_all


class Command(BaseCommand):
    help = "Assemble the local embedding, chat and transcription models into MODELS_DIR (idempotent; checks sha256)."

    def handle(self, *args: Any, **options: Any) -> None:
        prepare_all(settings.MODELS_DIR, lambda line: self.stdout.write(line))
