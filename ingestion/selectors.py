from datetime import datetime

from django.db.models import QuerySet, Sum
from django.shortcuts import get_object_or_404
from django.utils import timezone

from accounts.models import User
from ingestion.models import Chunk, Job, Source


def sources_of(*, owner: User) -> QuerySet[Source]:
    return Source.objects.filter(owner=owner)


def sources_searchable(*, owner: User, include_private: bool = False) -> QuerySet[Source]:
    """The owner's sources that search, answers and the MCP tools may read: private ones only when the
    person asks to include them (the passage search's own SQL is `chat.selectors._visible`)."""
    sources = sources_of(owner=owner)
    return sources if include_private else sources.filter(private=False)


def sources_added(*, owner: User, since: datetime | None, limit: int, include_private: bool = False) -> list[Source]:
    """The owner's sources added at or after `since` (any time if None; a naive value is read in the
    owner's zone), newest first; private ones only with `include_private`."""
    sources = sources_searchable(owner=owner, include_private=include_private)
    if since is not None:
        sources = sources.filter(
            created_at__gte=since if timezone.is_aware(since) else since.replace(tzinfo=owner.zone)
        )
    return list(sources.order_by("-created_at", "-id")[:limit])


def source_get(*, owner: User, source_id: int, include_private: bool = True) -> Source:
    """The owner's source, or Http404 — also for another user's id, and for a private source when
    `include_private` is False (what search, answers and the MCP tools read). The owner's own pages
    and the sources API show their private sources."""
    return get_object_or_404(sources_searchable(owner=owner, include_private=include_private), pk=source_id)


def jobs_of(*, owner: User) -> QuerySet[Job]:
    return Job.objects.filter(owner=owner).select_related("source")


def job_get(*, owner: User, job_id: int) -> Job:
    return get_object_or_404(Job.objects.select_related("source"), pk=job_id, owner=owner)


def chunk_get(*, owner: User, chunk_id: int) -> Chunk:
    return get_object_or_404(Chunk.objects.select_related("source"), pk=chunk_id, owner=owner)


def jobs_changed_since(*, owner_id: int, since: datetime) -> list[Job]:
    """The owner's jobs changed at or after `since`, the latest change last."""
    return list(
        Job.objects.filter(owner_id=owner_id, updated_at__gte=since).select_related("source").order_by("updated_at")
    )


def latest_jobs_by_source(*, owner: User, source_ids: list[int]) -> dict[int, Job]:
    """Each source's newest job, in one query."""
    jobs = Job.objects.filter(owner=owner, source_id__in=source_ids).order_by("source_id", "-created_at", "-id")
    return {job.source_id: job for job in jobs.distinct("source_id")}


def storage_used(*, owner: User) -> int:
    """Bytes the owner's sources take: their files and notes as they were added."""
    return Source.objects.filter(owner=owner).aggregate(total=Sum("size"))["total"] or 0
