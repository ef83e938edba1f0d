from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string
from django.utils import timezone

from ingestion.models import Job
from ingestion.selectors import jobs_changed_since
from ingestion.services import job_event, jobs_group
from secondbrain import rls

# A page shows its jobs as they were when it was rendered; what changed before its socket joined the
# group was sent to no one. On connecting it is sent the jobs changed this long before, as they are now.
CAUGHT_UP_SECONDS = 120


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
        since = timezone.now() - timedelta(seconds=CAUGHT_UP_SECONDS)
        for job in await database_sync_to_async(_changed_since)(user.pk, since):
            await self.job_update({"job": job})

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


def _changed_since(owner_id: int, since: datetime) -> list[dict[str, Any]]:
    with rls.owner_scope(owner_id):
        return [
            job_event(job, job.source.title, job.source if job.status == Job.Status.DONE else None)
            for job in jobs_changed_since(owner_id=owner_id, since=since)
        ]
