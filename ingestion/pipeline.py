"""Running one ingestion job: extract → chunk → embed → replace the source's chunks.

Every step is safe to repeat: the job is claimed with a conditional UPDATE, and the chunks are
replaced in one transaction, so a job run twice (redelivered after a crash, re-queued by the
sweeper) ends with one set of chunks. Each progress step doubles as the cancellation check.
"""

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import openai
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ingestion.chunking import chunk_markdown, chunk_text
from ingestion.embeddings import embed_texts
from ingestion.extract import Extracted, Segment
from ingestion.models import Chunk, Job, Source
from ingestion.services import notify
from secondbrain.errors import DATABASE_UNREACHABLE, AppError

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# Failures that may pass by themselves: a database restart, a model server that is busy.
TRANSIENT = (*DATABASE_UNREACHABLE, openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError)
AUDIO_CHUNK_WORDS = 120
AUDIO_CHUNK_SECONDS = 60.0


class Cancelled(Exception):
    """The job was cancelled (or its source deleted) while it ran."""


class RetryLater(Exception):
    def __init__(self, countdown: int) -> None:
        super().__init__(f"retry in {countdown} s")
        self.countdown = countdown


@dataclass(frozen=True)
class Passage:
    text: str
    anchor: dict[str, Any]
    context: str  # travels with the text into the embedding only (title, headings)
    offset: float = 0.0  # seconds after the source's start: audio passages happen later than it


def job_claim(*, job_id: int) -> Job | None:
    """Move a queued job to running; None when another worker got it first or it is gone."""
    now = timezone.now()
    claimed = Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING,
        stage=Job.Stage.EXTRACTING,
        progress=0,
        attempts=F("attempts") + 1,
        error_code="",
        error_message="",
        started_at=now,
        updated_at=now,
    )
    if not claimed:
        return None
    return Job.objects.select_related("source").get(pk=job_id)


def job_process(*, job_id: int) -> None:
    """Run one ingestion job to its end; raises RetryLater when a transient failure should be retried."""
    job = job_claim(job_id=job_id)
    if job is None:
        logger.info("job %s is not queued any more (done, taken, cancelled or deleted); skipping", job_id)
        return
    try:
        extracted, passages = _extract(job)
        vectors = _embed(job, passages)
        _progress(job, stage=Job.Stage.STORING, progress=97)
        chunks_replace(source_id=job.source_id, passages=passages, vectors=vectors, extracted=extracted)
    except Cancelled:
        logger.info("job %s was cancelled", job_id)
        return
    except AppError as exc:
        _finish(job, status=Job.Status.FAILED, error_code=exc.code, error_message=exc.message)
        return
    except TRANSIENT as exc:
        _retry_or_fail(job, exc)
    except Exception:
        logger.exception("job %s failed", job_id)
        _finish(job, status=Job.Status.FAILED, error_code="internal_error", error_message=_INTERNAL)
        raise
    else:
        _finish(job, status=Job.Status.DONE, stage=Job.Stage.DONE, progress=100)


_INTERNAL = "Processing failed unexpectedly; try Reprocess. The error is in the worker's log."


def _retry_or_fail(job: Job, exc: Exception) -> None:
    if job.attempts >= MAX_ATTEMPTS:
        logger.error("job %s failed after %s attempts: %r", job.pk, job.attempts, exc)
        _finish(job, status=Job.Status.FAILED, error_code="internal_error", error_message=_INTERNAL)
        return
    countdown = 5 * 2 ** (job.attempts - 1)
    logger.warning("job %s hit %r; retrying in %s s", job.pk, exc, countdown)
    Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
        status=Job.Status.QUEUED, stage=Job.Stage.QUEUED, progress=0, updated_at=timezone.now()
    )
    raise RetryLater(countdown) from exc


def _extract(job: Job) -> tuple[Extracted, list[Passage]]:
    source = job.source
    if source.kind == Source.Kind.NOTE:
        _progress(job, stage=Job.Stage.CHUNKING, progress=10)
        extracted = Extracted(segments=[Segment(text=source.text, anchor={})])
        passages = _note_passages(source.title, source.text)
    else:
        path = _file_path(source)
        if source.kind == Source.Kind.PDF:
            from ingestion.extract import pdf as extractor
        elif source.kind == Source.Kind.AUDIO:
            from ingestion.extract import audio as extractor  # type: ignore[no-redef]
        else:
            raise AppError("unsupported_type", f"{source.get_kind_display()} files cannot be processed.")
        stage, share = _extraction_stage(source)
        _progress(job, stage=stage, progress=1)
        extracted = extractor.extract(path, lambda done: _progress(job, stage=stage, progress=1 + int(share * done)))
        _progress(job, stage=Job.Stage.CHUNKING, progress=share + 1)
        passages = _file_passages(source, extracted)
    if not passages:
        raise AppError("empty_content", f"No text was found in {source.title}.")
    return extracted, passages


def _extraction_stage(source: Source) -> tuple[str, int]:
    """The stage name and the share of the progress bar extraction takes (transcription dominates)."""
    if source.kind == Source.Kind.AUDIO:
        return Job.Stage.TRANSCRIBING, 80
    return Job.Stage.EXTRACTING, 50


def _file_path(source: Source) -> Path:
    try:
        path = Path(source.file.path)
    except ValueError:
        raise AppError("file_missing", "The uploaded file is missing; upload it again.") from None
    if not path.is_file():
        raise AppError("file_missing", "The uploaded file is missing; upload it again.")
    return path


def _note_passages(title: str, text: str) -> list[Passage]:
    return [
        Passage(text=piece.text, anchor={"heading": list(piece.heading)}, context=" › ".join([title, *piece.heading]))
        for piece in chunk_markdown(text)
    ]


def _file_passages(source: Source, extracted: Extracted) -> list[Passage]:
    if source.kind == Source.Kind.AUDIO:
        return list(_audio_passages(source.title, extracted.segments))
    return [
        Passage(
            text=piece.text,
            anchor={"page": segment.anchor["page"]},
            context=f"{source.title}, page {segment.anchor['page']}",
        )
        for segment in extracted.segments
        for piece in chunk_text(segment.text)
    ]


def _audio_passages(title: str, segments: Iterable[Segment]) -> Iterable[Passage]:
    """Consecutive transcript segments packed into passages of about a minute, anchored start to end."""
    group: list[Segment] = []
    for segment in segments:
        if group and (
            sum(len(s.text.split()) for s in group) + len(segment.text.split()) > AUDIO_CHUNK_WORDS
            or segment.anchor["end"] - group[0].anchor["start"] > AUDIO_CHUNK_SECONDS
        ):
            yield _audio_passage(title, group)
            group = []
        group.append(segment)
    if group:
        yield _audio_passage(title, group)


def _audio_passage(title: str, group: list[Segment]) -> Passage:
    start, end = group[0].anchor["start"], group[-1].anchor["end"]
    text = " ".join(segment.text.strip() for segment in group).strip()
    return Passage(text=text, anchor={"start": start, "end": end}, context=title, offset=float(start))


def _embed(job: Job, passages: list[Passage]) -> list[list[float]]:
    inputs = [f"{passage.context}\n{passage.text}" for passage in passages]
    start_at = job.progress
    vectors: list[list[float]] = []
    batch = settings.EMBEDDING_BATCH_SIZE
    for start in range(0, len(inputs), batch):
        vectors.extend(embed_texts(inputs[start : start + batch]).tolist())
        done = min(start + batch, len(inputs)) / len(inputs)
        _progress(job, stage=Job.Stage.EMBEDDING, progress=start_at + int((96 - start_at) * done))
    return vectors


def chunks_replace(
    *, source_id: int, passages: list[Passage], vectors: list[list[float]], extracted: Extracted
) -> None:
    """Make the source's chunks exactly `passages`, in one transaction.

    Chunks are upserted on (source, ordinal), so a reprocessed source keeps its chunk ids and the
    citations pointing at them; surplus old chunks are deleted.
    """
    with transaction.atomic():
        source = Source.objects.select_for_update().filter(pk=source_id).first()
        if source is None:
            raise Cancelled()
        _apply_file_facts(source, extracted)
        rows = [
            Chunk(
                source=source,
                owner_id=source.owner_id,
                ordinal=ordinal,
                text=passage.text,
                anchor=passage.anchor,
                occurred_at=source.occurred_at + timedelta(seconds=passage.offset),
                embedding=vector,
            )
            for ordinal, (passage, vector) in enumerate(zip(passages, vectors, strict=True))
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
        source.metadata["chunks"] = len(rows)
        source.save(update_fields=["status", "metadata", "occurred_at"])


def _apply_file_facts(source: Source, extracted: Extracted) -> None:
    source.metadata.update(extracted.metadata)
    if extracted.occurred_at is not None and source.metadata.get("occurred_at_from") != "user":
        source.occurred_at = extracted.occurred_at
        source.metadata["occurred_at_from"] = "file"


def _progress(job: Job, *, stage: str, progress: int) -> None:
    """Record progress; the same UPDATE tells whether the job was cancelled or deleted meanwhile."""
    progress = max(0, min(progress, 99))
    if (job.stage, job.progress) == (stage, progress):
        return
    updated = Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
        stage=stage, progress=progress, updated_at=timezone.now()
    )
    if not updated:
        raise Cancelled()
    job.stage, job.progress = stage, progress
    notify(job, job.source.title)


def _finish(job: Job, **fields: Any) -> None:
    """Record the job's outcome, unless it was cancelled or deleted meanwhile."""
    now = timezone.now()
    updated = Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(**fields, finished_at=now, updated_at=now)
    if not updated:
        return
    for name, value in fields.items():
        setattr(job, name, value)
    if job.status == Job.Status.FAILED:
        Source.objects.filter(pk=job.source_id).update(status=Source.Status.FAILED)
        notify(job, job.source.title)
    else:
        source = Source.objects.get(pk=job.source_id)  # its date may now come from the file
        notify(job, source.title, source)
