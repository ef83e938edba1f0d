from datetime import UTC, datetime, tzinfo
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string
from django.utils import timezone

from ingestion.services import jobs_group


class JobsConsumer(AsyncWebsocketConsumer):
    """Relays the owner's job progress, sent by the worker through the channel layer, as HTML."""

    group = ""
    zone: tzinfo = UTC

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.group = jobs_group(user.pk)
        self.zone = user.zone
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def job_update(self, event: dict[str, Any]) -> None:
        job = dict(event["job"])
        if "occurred_at" in job:
            job["occurred_at"] = datetime.fromisoformat(job["occurred_at"])
        with timezone.override(self.zone):
            html = render_to_string("ingestion/home.html#job-status", {"job": job, "oob": True})
        await self.send(text_data=html)
