import hashlib
import logging
from datetime import datetime
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from ingestion.chunking import Piece, chunk_markdown
from ingestion.embeddings import embed_texts
from ingestion.models import Chunk, Job, Source
from secondbrain.errors import AppError

logger = logging.getLogger(__name__)

TITLE_MAX_CHARS = 120


def jobs_group(owner_id: int) -> str:
    """The channel-layer group that receives an owner's job updates."""
    return f"jobs-{owner_id}"


def note_create(*, owner: User, text: str, title: str = "", occurred_at: datetime | None = None) -> Job:
    """Store a typed note and queue its processing; the task is sent only once the rows are committed."""
    if not text.strip():
        raise AppError("empty_content", "The note is empty: write something first.", status=422)
    body = text.encode("utf-8", errors="surrogatepass")
    if len(body) > settings.MAX_UPLOAD_BYTES:
        raise AppError(
            "file_too_large",
            f"The note is {len(body) / 2**20:.1f} MB; the limit is {settings.MAX_UPLOAD_MB} MB.",
            status=413,
        )
    text = text.replace("\x00", "")  # Postgres text cannot hold NUL
    now = timezone.now()
    with transaction.atomic():
        source = Source.objects.create(
            owner=owner,
            kind=Source.Kind.NOTE,
            title=(title.strip() or _title_from_text(text))[:TITLE_MAX_CHARS],
            text=text,
            mime_type="text/markdown",
            size=len(body),
            sha256=hashlib.sha256(body).hexdigest(),
            created_at=now,
            occurred_at=occurred_at or now,
        )
        return _job_enqueue(source=source)


def source_reprocess(*, source: Source) -> Job:
    with transaction.atomic():
        Source.objects.filter(pk=source.pk).update(status=Source.Status.PENDING)
        return _job_enqueue(source=source)


def source_delete(*, source: Source) -> None:
    """Delete a source with its chunks and jobs (cascade in one statement) and then its file."""
    file_name = source.file.name if source.file else ""
    storage = source.file.storage
    with transaction.atomic():
        Source.objects.filter(pk=source.pk).delete()
        if file_name:
            transaction.on_commit(lambda: storage.delete(file_name))


def _job_enqueue(*, source: Source) -> Job:
    from ingestion.tasks import process_job  # tasks import services

    job = Job.objects.create(owner_id=source.owner_id, source=source)
    transaction.on_commit(lambda: process_job.delay(job.pk))
    _notify(job, source.title)
    return job


def _title_from_text(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line
    return "Untitled note"


def job_claim(*, job_id: int) -> Job | None:
    """Move a queued job to running; None when another worker got it first or it is gone."""
    claimed = Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING,
        stage=Job.Stage.EXTRACTING,
        progress=0,
        attempts=F("attempts") + 1,
        started_at=timezone.now(),
        updated_at=timezone.now(),
    )
    if not claimed:
        return None
    return Job.objects.select_related("source").get(pk=job_id)


def job_process(*, job_id: int) -> None:
    """Run one ingestion job to its end, safe to call twice for the same id (the claim decides)."""
    job = job_claim(job_id=job_id)
    if job is None:
        logger.info("job %s is not queued any more (done, taken or deleted); skipping", job_id)
        return
    try:
        pieces = _extract_pieces(job)
        _job_progress(job, stage=Job.Stage.EMBEDDING, progress=30)
        vectors = _embed_pieces(job, pieces)
        _job_progress(job, stage=Job.Stage.STORING, progress=95)
        chunks_replace(source_id=job.source_id, pieces=pieces, vectors=vectors)
    except AppError as exc:
        _job_fail(job, code=exc.code, message=exc.message)
        return
    except Exception:
        logger.exception("job %s failed", job_id)
        _job_fail(job, code="internal_error", message="Processing failed unexpectedly; try Reprocess.")
        raise
    _job_finish(job)


def _extract_pieces(job: Job) -> list[Piece]:
    source = job.source
    if source.kind != Source.Kind.NOTE:
        raise AppError("unsupported_type", f"{source.get_kind_display()} files cannot be processed yet.")
    _job_progress(job, stage=Job.Stage.CHUNKING, progress=10)
    pieces = chunk_markdown(source.text)
    if not pieces:
        raise AppError("empty_content", "The note has no text to index.")
    return pieces


def _embed_pieces(job: Job, pieces: list[Piece]) -> list[list[float]]:
    title = job.source.title
    # The title and heading path travel with the passage into the vector: "Budget" under
    # "# Meeting 3 May" means more than "Budget" alone.
    inputs = [" › ".join([title, *piece.heading]) + "\n" + piece.text for piece in pieces]
    vectors: list[list[float]] = []
    batch = settings.EMBEDDING_BATCH_SIZE
    for start in range(0, len(inputs), batch):
        vectors.extend(embed_texts(inputs[start : start + batch]).tolist())
        done = min(start + batch, len(inputs))
        _job_progress(job, stage=Job.Stage.EMBEDDING, progress=30 + int(60 * done / len(inputs)))
    return vectors


def chunks_replace(*, source_id: int, pieces: list[Piece], vectors: list[list[float]]) -> None:
    """Make the source's chunks exactly `pieces`, in one transaction.

    Chunks are upserted on (source, ordinal), so a reprocessed source keeps its chunk ids and the
    citations pointing at them; surplus old chunks are deleted.
    """
    with transaction.atomic():
        source = Source.objects.select_for_update().filter(pk=source_id).first()
        if source is None:
            raise AppError("source_deleted", "The source was deleted while it was being processed.")
        rows = [
            Chunk(
                source=source,
                owner_id=source.owner_id,
                ordinal=ordinal,
                text=piece.text,
                anchor={"heading": list(piece.heading)},
                occurred_at=source.occurred_at,
                embedding=vector,
            )
            for ordinal, (piece, vector) in enumerate(zip(pieces, vectors, strict=True))
        ]
        Chunk.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["source", "ordinal"],
            update_fields=["text", "anchor", "occurred_at", "embedding"],
            batch_size=500,
        )
        Chunk.objects.filter(source=source, ordinal__gte=len(rows)).delete()
        source.status = Source.Status.READY
        source.metadata = {**source.metadata, "chunks": len(rows)}
        source.save(update_fields=["status", "metadata"])


def _job_progress(job: Job, *, stage: str, progress: int) -> None:
    job.stage, job.progress = stage, progress
    Job.objects.filter(pk=job.pk).update(stage=stage, progress=progress, updated_at=timezone.now())
    _notify(job, job.source.title)


def _job_finish(job: Job) -> None:
    _job_set(job, status=Job.Status.DONE, stage=Job.Stage.DONE, progress=100, error_code="", error_message="")


def _job_fail(job: Job, *, code: str, message: str) -> None:
    _job_set(job, status=Job.Status.FAILED, error_code=code, error_message=message)
    Source.objects.filter(pk=job.source_id).update(status=Source.Status.FAILED)


def _job_set(job: Job, **fields: Any) -> None:
    """Record the job's outcome; a job deleted with its source meanwhile is left deleted."""
    now = timezone.now()
    for name, value in fields.items():
        setattr(job, name, value)
    Job.objects.filter(pk=job.pk).update(**fields, finished_at=now, updated_at=now)
    _notify(job, job.source.title)


def job_event(job: Job, title: str) -> dict[str, Any]:
    """The job as the browser sees it; also the payload of the channel-layer message."""
    return {
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


def _notify(job: Job, title: str) -> None:
    """Tell the owner's open pages about the job, once the change is committed."""
    message = {"type": "job.update", "job": job_event(job, title)}
    group = jobs_group(job.owner_id)

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(group, message)
        except Exception:  # progress is a courtesy; losing one update must not fail the job
            logger.warning("could not send job %s progress to the channel layer", job.pk, exc_info=True)

    transaction.on_commit(send)
