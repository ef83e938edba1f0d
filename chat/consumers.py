import asyncio
import contextlib
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.template.loader import render_to_string

from accounts.models import User
from chat import selectors, services
from chat.models import Message
from ingestion.embeddings import get_embedder
from secondbrain import limits, rls
from secondbrain.errors import DATABASE_UNREACHABLE, AppError, as_app_error

logger = logging.getLogger(__name__)


class ChatConsumer(AsyncJsonWebsocketConsumer):
    """Takes the chat form's messages (htmx `ws-send`) and streams each answer back as HTML fragments.

    `{"question", "conversation_id"}` asks (with `source_id`, `selection` and optionally `chunk_id`:
    about text selected in a source; `"include_private": true` reads private sources too);
    `{"action": "regenerate", "conversation_id"}` answers the conversation's last question again;
    `{"action": "stop"}` stops the answer being written. Each
    answer runs in a task of its own so that a stop can arrive while it streams. Each fragment is an
    out-of-band swap aimed at the current turn's elements, so the consumer remembers the turn the
    `start` event opened.
    """

    turn: int | None = None
    question = ""
    about: services.About | None = None  # what the question being answered is about, for its Retry
    conversation_id: int | None = None
    wrote = False  # whether the current answer has sent a token
    answering: "asyncio.Task[None] | None" = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        await self.accept()
        # The first question needs the embedding model; load it while the person is typing.
        asyncio.get_running_loop().run_in_executor(None, get_embedder)

    async def disconnect(self, code: int) -> None:
        # A closed tab or a dropped connection stops the answer; the service keeps what was written.
        await self._cancel()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        # This message's work, and the answer task it starts, see only this person's rows.
        rls.enter(self.scope["user"].pk)
        if not isinstance(content, dict):
            await self._send_event({"type": "error", "code": "malformed_request", "message": "Send a JSON object."})
            return
        action = content.get("action") or "ask"
        if action == "stop":
            await self._stop()
            return
        if action not in ("ask", "regenerate"):
            await self._send_event({"type": "error", "code": "malformed_request", "message": "Unknown action."})
            return
        # A new question while an answer streams ends that answer first: one answer at a time.
        await self._stop()
        self.answering = asyncio.create_task(self._answer(content, regenerate=action == "regenerate"))

    async def _answer(self, content: dict[str, Any], *, regenerate: bool) -> None:
        self.turn, self.wrote, self.about = None, False, None
        self.question = "" if regenerate else str(content.get("question", ""))
        try:
            await limits.arate_spend("ask", self.scope["user"].pk)
            raw_id = content.get("conversation_id") or None
            self.conversation_id = int(raw_id) if raw_id is not None else None
            if not regenerate and content.get("source_id"):
                chunk_id = content.get("chunk_id") or None
                self.about = services.About(
                    source_id=int(content["source_id"]),
                    selection=str(content.get("selection") or ""),
                    chunk_id=int(chunk_id) if chunk_id is not None else None,
                )
            events = services.answer_stream(
                user=self.scope["user"],
                question=self.question,
                conversation_id=self.conversation_id,
                ignore_dates=_flag(content, "ignore_dates"),  # the × on a date chip
                regenerate=regenerate,
                about=self.about,
                include_private=_flag(content, "include_private"),  # the "Include private sources" box
            )
            # aclosing: a cancel that lands while a fragment is being sent still reaches the
            # generator (as GeneratorExit), so the partial answer is stored before `_stop` reads it.
            async with contextlib.aclosing(events):
                async for event in events:
                    await self._send_event(event)
        except ValueError:
            await self._send_event(
                {"type": "error", "code": "malformed_request", "message": "Bad conversation or source id."}
            )
        except (AppError, *DATABASE_UNREACHABLE) as exc:
            error = as_app_error(exc)
            await self._send_event({"type": "error", "code": error.code, "message": error.message})
        except Exception:
            logger.exception("answering failed")
            await self._send_event(
                {"type": "error", "code": "internal_error", "message": "Something went wrong while answering."}
            )

    async def _cancel(self) -> bool:
        """Cancel the answer being written, if any, and wait until the service has stored it."""
        task, self.answering = self.answering, None
        if task is None or task.done():
            return False
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            # The answer's own cancellation ends here; this consumer's (the server, or a test's event
            # loop, closing it while it waits) must not: swallowed, the consumer went on waiting for
            # messages that never come, and the loop's shutdown waited on it for ever.
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
        return True

    async def _stop(self) -> None:
        if not await self._cancel() or self.turn is None:
            return
        answer = await database_sync_to_async(_answer_after)(
            user=self.scope["user"], conversation_id=self.conversation_id, turn=self.turn
        )
        await self._send_event({"type": "stopped", "answer": answer.content if answer else ""})

    async def _send_event(self, event: dict[str, Any]) -> None:
        if event["type"] == "start":
            self.turn, self.question = event["turn"], event["question"]
            self.conversation_id = event["conversation_id"]
        context = {
            "event": event,
            "turn": self.turn,
            "question": self.question,
            "about": self.about,
            "conversation_id": self.conversation_id or "",
            "wrote": self.wrote,
        }
        if event["type"] == "token":
            self.wrote = True
        html = render_to_string(f"chat/chat.html#event-{event['type']}", context)
        await self.send(text_data=html)


def _flag(content: dict[str, Any], name: str) -> bool:
    """A yes/no field of a message: a form field arrives as a string, a script may send a boolean."""
    return content.get(name) in (True, "true", "1", "on")


def _answer_after(*, user: User, conversation_id: int | None, turn: int) -> Message | None:
    """The answer stored for the question `turn`, if the service kept one."""
    if conversation_id is None:
        return None
    conversation = selectors.conversations_of(owner=user).filter(pk=conversation_id).first()
    if conversation is None:
        return None
    answers = selectors.messages_of(conversation=conversation).filter(role=Message.Role.ASSISTANT, id__gt=turn)
    return answers.order_by("id").first()
