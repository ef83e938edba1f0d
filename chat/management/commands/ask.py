"""`manage.py ask "…" --user NAME`: the answer as it streams, then its sources — the chat's own pipeline."""

import contextlib
import re
from argparse import ArgumentParser
from typing import Any

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from accounts.selectors import user_named
from chat import services
from ingestion.models import anchor_label
from secondbrain.errors import DATABASE_UNREACHABLE, AppError, as_app_error

MARKER = re.compile(r"\s*\[\d+\]")


class Command(BaseCommand):
    help = "Ask a question of a person's notes; prints the answer as it is written, then the sources it cites."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("question")
        parser.add_argument("--user", required=True, help="the username whose notes answer")
        parser.add_argument("--conversation", type=int, default=None, help="continue this conversation (its id)")
        parser.add_argument(
            "--include-private", action="store_true", help="also read the sources marked private (left out otherwise)"
        )
        parser.add_argument("--source", type=int, default=None, help="ask about text of this source (its id)")
        parser.add_argument(
            "--selection",
            default=None,
            help="the text of --source to ask about: the answer reads only it and its surroundings",
        )

    def handle(
        self,
        *args: Any,
        question: str,
        user: str,
        conversation: int | None,
        include_private: bool,
        source: int | None,
        selection: str | None,
        **options: Any,
    ) -> None:
        owner = user_named(user)
        if owner is None:
            raise CommandError(f"There is no user named {user!r}.")
        try:
            about = services.About.of(source, selection)
            question = services.question_clean(question)
            if about is not None:
                services.selection_of(user=owner, about=about)  # a clear error now, not a broken stream
            error = async_to_sync(self._stream)(owner, question, conversation, about, include_private)
        except (AppError, *DATABASE_UNREACHABLE) as exc:
            error = as_app_error(exc)
        if error is not None:
            raise CommandError(f"{error.message} ({error.code})")

    async def _stream(
        self,
        owner: User,
        question: str,
        conversation_id: int | None,
        about: services.About | None,
        include_private: bool,
    ) -> AppError | None:
        """Print tokens as they arrive, then the checked answer if the check changed it, then the sources."""
        written: list[str] = []
        events = services.answer_stream(
            user=owner, question=question, conversation_id=conversation_id, about=about, include_private=include_private
        )
        async with contextlib.aclosing(events):  # closed when an error ends it early, not left to the collector
            async for event in events:
                if event["type"] == "token":
                    written.append(event["text"])
                    self.stdout.write(event["text"], ending="")
                    self.stdout.flush()
                elif event["type"] == "error":
                    self.stdout.write("")
                    return AppError(event["code"], event["message"])
                elif event["type"] == "done":
                    self._done(event, streamed="".join(written))
        return None

    def _done(self, event: dict[str, Any], *, streamed: str) -> None:
        self.stdout.write("")
        if _words(event["answer"]) != _words(streamed):
            # The support check removed what the model wrote unsupported; the stored answer is this.
            # Markers alone it may add or move are not worth printing the answer twice.
            self.stdout.write(self.style.WARNING("Checked against your notes:"))
            self.stdout.write(event["answer"])
        if event["citations"]:
            self.stdout.write(self.style.MIGRATE_HEADING("Sources:"))
        for citation in event["citations"]:
            where = anchor_label(citation["anchor"] or {})
            self.stdout.write(f"[{citation['marker']}] {citation['source_title']}" + (f" — {where}" if where else ""))
        self.stdout.write(f"(conversation {event['conversation_id']})", self.style.HTTP_INFO)


def _words(answer: str) -> str:
    return " ".join(MARKER.sub("", answer).split())
