import asyncio
import logging
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.template.loader import render_to_string

from chat import services
from ingestion.embeddings import get_embedder
from secondbrain.errors import AppError

logger = logging.getLogger(__name__)


class ChatConsumer(AsyncJsonWebsocketConsumer):
    """Takes a question from the chat form (htmx `ws-send`) and streams the answer back as HTML fragments.

    Each fragment is an out-of-band swap aimed at the current turn's elements, so the consumer
    remembers the turn the `start` event opened.
    """

    turn: int | None = None
    question = ""
    conversation_id: int | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        await self.accept()
        # The first question needs the embedding model; load it while the person is typing.
        asyncio.get_running_loop().run_in_executor(None, get_embedder)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            await self._send_event({"type": "error", "code": "malformed_request", "message": "Send a JSON object."})
            return
        self.turn = None
        raw_id = content.get("conversation_id") or None
        try:
            conversation_id = int(raw_id) if raw_id is not None else None
            events = services.answer_stream(
                user=self.scope["user"],
                question=str(content.get("question", "")),
                conversation_id=conversation_id,
                # The × on a date chip: a form field arrives as a string, a script may send a boolean.
                ignore_dates=content.get("ignore_dates") in (True, "true", "1", "on"),
            )
            async for event in events:
                await self._send_event(event)
        except ValueError:
            await self._send_event({"type": "error", "code": "malformed_request", "message": "Bad conversation id."})
        except AppError as exc:
            await self._send_event({"type": "error", "code": exc.code, "message": exc.message})
        except Exception:
            logger.exception("answering failed")
            await self._send_event(
                {"type": "error", "code": "internal_error", "message": "Something went wrong while answering."}
            )

    async def _send_event(self, event: dict[str, Any]) -> None:
        if event["type"] == "start":
            self.turn, self.question = event["turn"], event["question"]
            self.conversation_id = event["conversation_id"]
        context = {
            "event": event,
            "turn": self.turn,
            "question": self.question,
            "conversation_id": self.conversation_id or "",
        }
        html = render_to_string(f"chat/chat.html#event-{event['type']}", context)
        await self.send(text_data=html)
