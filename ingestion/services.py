"""Writes of the ingestion app: storing what a person adds, and steering its jobs.

Running a job — extraction, chunking, embedding — is in `ingestion/pipeline.py`.
"""

import functools
import hashlib
import logging
import uuid
from datetime import datetime, timedelta
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import async_to_sync
from celery.exceptions import SoftTimeLimitExceeded
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, connection, transaction
from django.db.models.signals import post_delete, pre_delete
from django.utils import timezone
from kombu.exceptions import OperationalError

from accounts.models import AuditEntry, User
from accounts.services import Via, audit_record
from ingestion import selectors
from ingestion.extract import web
from ingestion.models import Job, Source
from ingestion.notes import NoteText, note_read
from ingestion.uploads import SNIFF_BYTES, decode_text, sniff, too_large
from secondbrain import limits
from secondbrain.errors import AppError

logger = logging.getLogger(__name__)

TITLE_MAX_CHARS = 120
CAPTION_MAX_CHARS = 2000
ACTIVE = (Job.Status.QUEUED, Job.Status.RUNNING)


def jobs_group(owner_id: int) -> str:
    """The channel-layer group that receives an owner's job updates."""
    return f"jobs-{owner_id}"


def note_create(
    *,
    owner: User,
    text: str,
    title: str = "",
    occurred_at: datetime | None = None,
    via: Via | None = None,
    metadata: dict[str, Any] | None = None,
    private: bool = False,
) -> Job:
    """Store a typed note and queue its processing; the task is sent only once the rows are committed.

    A note that opens with front matter takes its title, date and tags from it (`note_read`); the
    title and date given here win over it. `via` names where it came from in the owner's audit log;
    `metadata` is kept on the source beside what the note itself gives (where it came from, say).
    A `private` note is left out of search and answers unless the person includes private sources.
    """
    limits.rate_spend("upload", owner.pk)
    if not text.strip():
        raise AppError("empty_content", "The note is empty: write something first.", status=422)
    body = text.encode("utf-8", errors="surrogatepass")
    if len(body) > settings.MAX_UPLOAD_BYTES:
        raise AppError(
            "file_too_large",
            f"The note is {len(body) / 2**20:.1f} MB; the limit is {settings.MAX_UPLOAD_MB} MB.",
            status=413,
        )
    storage_quota_check(owner=owner, adding=len(body))
    source = Source(
        owner=owner,
        kind=Source.Kind.NOTE,
        mime_type="text/markdown",
        size=len(body),
        sha256=hashlib.sha256(body).hexdigest(),
        metadata=dict(metadata or {}),
        private=private,
    )
    note = _note_fill(
        source=source, text=text.replace("\x00", ""), title=title, empty="The note has only front matter."
    )
    return _source_store(source=source, occurred_at=occurred_at or note.occurred_at, via=via)


def upload_create(
    *,
    owner: User,
    upload: UploadedFile,
    title: str = "",
    caption: str = "",
    occurred_at: datetime | None = None,
    rated: bool = True,
    via: Via | None = None,
    private: bool = False,
) -> Job:
    """Store an uploaded file as a source of the kind its bytes show, and queue its processing.

    `caption`: what the person says an image shows, kept as its text (searchable beside the text read
    in it, and its title when none is given); refused with any other kind of file.
    `rated`: counted against the owner's upload rate, as everything that comes over the web is.
    `private`: left out of search and answers unless the person includes private sources.
    """
    if rated:
        limits.rate_spend("upload", owner.pk)
    name = PurePath(upload.name or "upload").name
    if (upload.size or 0) > settings.MAX_UPLOAD_BYTES:  # checked as it streams in over HTTP; not from disk
        raise too_large()
    upload.seek(0)
    sniffed = sniff(upload.read(SNIFF_BYTES), name)
    caption = _caption_check(caption, kind=sniffed.kind, name=name)
    sha256 = getattr(upload, "sha256", None) or _sha256_of(upload)
    source = Source(
        owner=owner,
        kind=sniffed.kind,
        title=(title.strip() or (caption and _title_from_text(caption)) or PurePath(name).stem or name)[
            :TITLE_MAX_CHARS
        ],
        text=caption,
        mime_type=sniffed.mime_type,
        size=upload.size or 0,
        sha256=sha256,
        metadata={"filename": name},
        private=private,
    )
    storage_quota_check(owner=owner, adding=source.size)  # before the file is written anywhere
    upload.seek(0)
    if sniffed.kind == Source.Kind.NOTE:
        note = _note_fill(source=source, text=decode_text(upload.read()), title=title, empty=f"{name} has no text.")
        return _source_store(source=source, occurred_at=occurred_at or note.occurred_at, via=via)
    # A random name: the person's file name stays in metadata, never in a path on disk.
    source.file.save(f"{uuid.uuid4().hex}{PurePath(name).suffix.lower()[:10]}", upload, save=False)
    try:
        return _source_store(source=source, occurred_at=occurred_at, via=via)
    except BaseException:
        source.file.delete(save=False)  # nothing half-stored stays behind
        raise


def _caption_check(caption: str, *, kind: str, name: str) -> str:
    caption = caption.replace("\x00", "").strip()
    if caption and kind != Source.Kind.IMAGE:
        raise AppError("caption_not_allowed", f"Only an image takes a caption, and {name} is not one.", status=422)
    if len(caption) > CAPTION_MAX_CHARS:
        raise AppError(
            "caption_too_long",
            f"The caption is {len(caption):,} characters; at most {CAPTION_MAX_CHARS:,}.",
            status=422,
        )
    return caption


def web_page_create(
    *,
    owner: User,
    url: str,
    title: str = "",
    occurred_at: datetime | None = None,
    rated: bool = True,
    via: Via | None = None,
    private: bool = False,
) -> Job:
    """Store a web page's address as a source and queue its fetching (`private`: see `note_create`).

    Only the address is checked here (`web.url_normalize`); the worker fetches and reads the page
    (ingestion/extract/web.py), which may take seconds. The source's sha256 is its address's, so the
    same page added twice is a duplicate as the same file is. The page's title and date replace the
    placeholder title and the time added, unless the person gave their own.
    """
    if rated:
        limits.rate_spend("upload", owner.pk)
    address = web.url_normalize(url)
    source = Source(
        owner=owner,
        kind=Source.Kind.URL,
        title=(title.strip() or _title_from_address(address))[:TITLE_MAX_CHARS],
        mime_type="text/html",
        size=0,  # the page's text, once it is read
        sha256=hashlib.sha256(f"url {address}".encode()).hexdigest(),
        metadata={"url": address, "title_from": "user" if title.strip() else "address"},
        private=private,
    )
    return _source_store(source=source, occurred_at=occurred_at, via=via)


def _title_from_address(address: str) -> str:
    parts = urlsplit(address)
    return f"{parts.netloc}{parts.path.rstrip('/')}"


def file_add(*, owner: User, path: Path, private: bool = False) -> Job:
    """Add a file from this machine's disk exactly as if it had been uploaded (the command line), but
    not counted against the web's upload rate: a folder of a thousand notes is one command of the
    machine's own operator."""
    with path.open("rb") as handle:
        upload = UploadedFile(handle, name=path.name, size=path.stat().st_size)
        return upload_create(
            owner=owner, upload=upload, rated=False, via=Via(AuditEntry.Channel.COMMAND), private=private
        )


def _note_fill(*, source: Source, text: str, title: str, empty: str) -> NoteText:
    """Give a note's source its text, title and tags, read from its front matter where it has one."""
    note = note_read(text, zone=source.owner.zone)
    if not note.body.strip():
        raise AppError("empty_content", empty, status=422)
    source.text = note.body
    source.title = (title.strip() or note.title or source.title or _title_from_text(note.body))[:TITLE_MAX_CHARS]
    if note.tags:
        source.metadata["tags"] = list(note.tags)
    source.private = source.private or note.private
    return note


def _source_store(*, source: Source, occurred_at: datetime | None, via: Via | None) -> Job:
    now = timezone.now()
    source.created_at = now
    source.occurred_at = occurred_at or now
    # A date the person gave wins over one the worker later finds in the file.
    source.metadata["occurred_at_from"] = "user" if occurred_at else "upload"
    duplicate = Source.objects.filter(owner=source.owner, sha256=source.sha256).first()
    if duplicate is not None:
        raise _duplicate(duplicate)
    try:
        with transaction.atomic():
            if settings.STORAGE_QUOTA_BYTES:
                # Two uploads of one owner at once both passed the early check: under the owner's
                # row lock, the second sees the first's size.
                User.objects.select_for_update().only("pk").get(pk=source.owner_id)
                storage_quota_check(owner=source.owner, adding=source.size)
            source.save()
            _audit(source, AuditEntry.Action.SOURCE_ADD, via)
            return _job_enqueue(source=source)
    except IntegrityError:  # the same file arrived twice at once
        raise _duplicate(Source.objects.get(owner=source.owner, sha256=source.sha256)) from None


def storage_quota_check(*, owner: User, adding: int) -> None:
    """Refuse `adding` bytes that would take the owner past STORAGE_QUOTA_BYTES (0: no quota)."""
    quota = settings.STORAGE_QUOTA_BYTES
    if not quota:
        return
    used = selectors.storage_used(owner=owner)
    if used + adding > quota:
        left = max(quota - used, 0)
        raise AppError(
            "quota_exceeded",
            f"This is {_size_label(adding)}, but only {_size_label(left)} of your {_size_label(quota)} of storage "
            "is left. Delete sources you no longer need to make room; nothing was stored.",
            status=413,
            extra={"quota_bytes": quota, "used_bytes": used},
        )


def _size_label(size: int) -> str:
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def _duplicate(existing: Source) -> AppError:
    return AppError(
        "duplicate", f"You already added this as “{existing.title}”.", status=409, extra={"source_id": existing.pk}
    )


def _sha256_of(upload: UploadedFile) -> str:
    digest = hashlib.sha256()
    upload.seek(0)
    for block in upload.chunks():
        digest.update(block)
    return digest.hexdigest()


def _title_from_text(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line.strip("-*_ "):  # a rule ("---") is no title
            return line
    return "Untitled note"


def source_update(*, source: Source, private: bool | None = None) -> Source:
    """Change what a person may change about a source once added: whether it is `private` (None:
    left as it is). Search reads the flag from the source itself, so the next search already sees it;
    answers given before keep their citations (they are the person's own), shown with a lock."""
    if private is not None and private != source.private:
        source.private = private
        source.save(update_fields=["private"])
    return source


def source_reprocess(*, source: Source) -> Job:
    with transaction.atomic():
        locked = Source.objects.select_for_update().get(pk=source.pk)
        if Job.objects.filter(source=locked, status__in=ACTIVE).exists():
            raise AppError("job_active", "This source is already being processed.", status=409)
        Source.objects.filter(pk=source.pk).update(status=Source.Status.PENDING)
        return _job_enqueue(source=locked)


def source_delete(*, source: Source, via: Via | None = None) -> None:
    """Delete a source, its chunks and its jobs in one statement (the database cascades), and note it
    in the owner's audit log (`via`: where the deletion came from).

    The ORM would load every chunk to cascade; this path sends the delete signals itself, so its
    words leave the owner's answers and its file goes once committed, as with any other deletion
    (ingestion/signals.py).
    """
    with transaction.atomic():
        pre_delete.send(sender=Source, instance=source, using=connection.alias, origin=source)
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM ingestion_source WHERE id = %s", [source.pk])
        post_delete.send(sender=Source, instance=source, using=connection.alias, origin=source)
        _audit(source, AuditEntry.Action.SOURCE_DELETE, via)


def _audit(source: Source, action: AuditEntry.Action, via: Via | None) -> None:
    """A source added or deleted, in its owner's audit log: its kind and size, never its title."""
    audit_record(
        user=source.owner,
        action=action,
        via=via,
        name=source.kind,
        detail={"source_id": source.pk, "size": source.size},
    )


def job_cancel(*, job: Job) -> Job:
    """Stop a queued or running job; a running one stops at its next progress step."""
    cancelled = Job.objects.filter(pk=job.pk, status__in=ACTIVE).update(
        status=Job.Status.CANCELLED, finished_at=timezone.now(), updated_at=timezone.now()
    )
    if not cancelled:
        raise AppError("job_finished", "This job has already finished.", status=409)
    job.refresh_from_db()
    Source.objects.filter(pk=job.source_id, status=Source.Status.PENDING).update(status=Source.Status.FAILED)
    notify(job, job.source.title)
    return job


def jobs_requeue_stuck(*, older_than: timedelta, max_attempts: int) -> list[int]:
    """Send again the jobs whose worker went silent (killed, or its message lost); the ids sent.

    A running job's heartbeat refreshes it every JOB_HEARTBEAT_SECONDS; one silent for `older_than`
    lost its worker. A queued one that old lost its message. Re-sending is safe: the claim decides.
    A job that has already been claimed `max_attempts` times fails instead: a file that kills its
    worker (out of memory, a crash in a library) would otherwise do so again every few minutes.
    Its chunks are stored in one transaction at its end, so a job that never ended stored none.
    """
    cutoff = timezone.now() - older_than
    with transaction.atomic():
        stuck = list(
            Job.objects.select_for_update(skip_locked=True)
            .filter(status__in=ACTIVE, updated_at__lt=cutoff)
            .select_related("source")
        )
        requeued = [job for job in stuck if job.attempts < max_attempts]
        for job in requeued:
            Job.objects.filter(pk=job.pk).update(status=Job.Status.QUEUED, updated_at=timezone.now())
            transaction.on_commit(functools.partial(_task_send, job))
        for job in stuck:
            if job.attempts >= max_attempts:
                _job_fail_attempts_spent(job)
    if stuck:
        logger.warning(
            "re-queued stuck jobs %s; failed after %s attempts: %s",
            [job.pk for job in requeued],
            max_attempts,
            [job.pk for job in stuck if job not in requeued],
        )
    return [job.pk for job in requeued]


def _job_fail_attempts_spent(job: Job) -> None:
    """Fail a stuck job that used its attempts; needs the caller's lock on the job's row."""
    now = timezone.now()
    job.status, job.error_code = Job.Status.FAILED, "too_many_attempts"
    job.error_message = (
        f"This file stopped the worker {job.attempts} times (it may be too large or damaged); it was not processed."
    )
    job.finished_at = job.updated_at = now
    job.save(update_fields=["status", "error_code", "error_message", "finished_at", "updated_at"])
    Source.objects.filter(pk=job.source_id).update(status=Source.Status.FAILED)
    notify(job, job.source.title)


def _job_enqueue(*, source: Source) -> Job:
    job = Job.objects.create(owner_id=source.owner_id, source=source)
    job.source = source
    transaction.on_commit(lambda: _task_send(job))
    notify(job, source.title)
    return job


def _task_send(job: Job) -> None:
    from ingestion.tasks import process_job  # tasks import services

    # Transcription is heavy and gets workers of its own, and longer time limits.
    queue = "transcribe" if job.source.kind == Source.Kind.AUDIO else "ingest"
    soft, hard = settings.JOB_TIME_LIMITS[queue]
    try:
        process_job.apply_async(args=[job.pk], queue=queue, soft_time_limit=soft, time_limit=hard)
    except OperationalError:
        # The queue (Redis) is down. The job is stored and shows as waiting; the sweeper sends it
        # again once the queue is back (`jobs_requeue_stuck`), so the upload is not refused for it.
        logger.warning("job %s: the queue is unreachable; it waits for the sweeper", job.pk, exc_info=True)


def job_event(job: Job, title: str, source: Source | None = None) -> dict[str, Any]:
    """The job as the browser sees it; also the payload of the channel-layer message.

    With `source` (once processing is done) it also carries the source's kind and its date, which
    processing may have taken from the file (PDF metadata, audio tags), so the page can show it.
    """
    facts = {"kind_label": source.get_kind_display(), "occurred_at": source.occurred_at.isoformat()} if source else {}
    return facts | {
        "id": job.pk,
        "source_id": job.source_id,
        "title": title,
        "status": job.status,
        "stage": job.stage,
        "stage_label": Job.Stage(job.stage).label,
        "progress": job.progress,
        "error_code": job.error_code,
        "error_message": job.error_message,
    }


def notify(job: Job, title: str, source: Source | None = None) -> None:
    """Tell the owner's open pages about the job, once the change is committed."""
    message = {"type": "job.update", "job": job_event(job, title, source)}
    group = jobs_group(job.owner_id)

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(group, message)
        except SoftTimeLimitExceeded:
            raise  # the job's time is up wherever the signal lands; the pipeline fails it
        except Exception:  # progress is a courtesy; losing one update must not fail the job
            logger.warning("could not send job %s progress to the channel layer", job.pk, exc_info=True)

    transaction.on_commit(send)
