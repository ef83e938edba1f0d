"""Running one ingestion job: extract → chunk → embed → replace the source's chunks.

Every step is safe to repeat: the job is claimed with a conditional UPDATE, and the chunks are
replaced in one transaction, so a job run twice (redelivered after a crash, re-queued by the
sweeper) ends with one set of chunks. Each progress step doubles as the cancellation check.

Memory stays flat whatever the input's size: passages are chunked lazily and embedded a batch at a
time into a spool file (passages and their float32 vectors; unlinked from the start, so a killed
worker leaves no file), which the storing transaction reads back a batch at a time.
"""

import itertools
import logging
import pickle
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import IO, Any
from zoneinfo import ZoneInfo

import numpy as np
import openai
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, connection, reset_queries, transaction
from django.db.models import F
from django.utils import timezone

from chat import temporal
from ingestion.chunking import chunk_text, iter_chunk_markdown, sentences
from ingestion.embeddings import embed_texts
from ingestion.extract import Extracted, Segment
from ingestion.models import Chunk, Job, Source
from ingestion.services import TITLE_MAX_CHARS, notify, storage_quota_check
from secondbrain import logs, metrics, rls, timing
from secondbrain.errors import DATABASE_UNREACHABLE, AppError

logger = logging.getLogger(__name__)

# Failures that may pass by themselves: a database restart, a model server that is busy.
TRANSIENT = (*DATABASE_UNREACHABLE, openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError)
AUDIO_CHUNK_WORDS = 120
AUDIO_CHUNK_SECONDS = 60.0
CAPTION = "Caption"  # the heading an image's caption is a passage under
# Rows per INSERT while storing: Django builds an INSERT at ~30 KB a row (each vector as text), so 500
# rows peaked at 15 MB and 100 at 3.5 MB, whatever the number of passages (tests/ingestion/test_jobs.py).
STORE_BATCH_ROWS = 100


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
    at: datetime | None = None  # when it happens, where the passage says so itself (a calendar's event)
    lines: bool = True  # its line breaks are the writer's; False where they are a page's wrapping (a PDF)

    @property
    def sentences(self) -> list[str]:
        return sentences(self.text, lines=self.lines)


PassageSource = Callable[[], Iterator[Passage]]  # a fresh walk over a job's passages at each call
# Passages, their vectors row for row, and each passage's sentences' vectors (`Passage.sentences`).
Batch = tuple[list[Passage], np.ndarray, list[np.ndarray]]


class Heartbeat:
    """Refreshes a running job's `updated_at` every JOB_HEARTBEAT_SECONDS from a thread of its own.

    A thread rather than calls from the work's loops: the long steps are one call into a library
    (a whisper piece, an ONNX batch, one INSERT of the storing transaction) that our code cannot
    interrupt, and they release the GIL. The beat dies with the process, so the sweeper still sees
    a killed worker; a worker that hangs alive is ended by the job's hard time limit. The thread
    uses its own database connection (Django's are per thread), so it beats while the job's own
    connection is inside the storing transaction, and its UPDATE is committed at once.
    """

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"job-{job_id}-heartbeat", daemon=True)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.wait(settings.JOB_HEARTBEAT_SECONDS):
                try:
                    beating = Job.objects.filter(pk=self.job_id, status=Job.Status.RUNNING).update(
                        updated_at=timezone.now()
                    )
                except DatabaseError:  # a database restart: a missed beat or two is harmless
                    logger.warning("job %s: heartbeat failed", self.job_id, exc_info=True)
                    connection.close()  # the next beat takes a fresh connection
                    continue
                if not beating:  # cancelled, deleted or ended: the work notices at its next step
                    return
        finally:
            connection.close()  # this thread's connection, back to the pool


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
    with rls.owner_scope(job.owner_id):
        _run(job)


def _run(job: Job) -> None:
    """Run the claimed job, each stage and the run's end a log line and a metric sample."""
    outcome = "failed"  # what an exception escaping the work means
    with timing.stages(lambda stage, seconds, result: _stage_ended(job, stage, seconds, result)) as clock:
        clock.enter(job.stage)
        try:
            outcome = _work(job)
        except RetryLater:
            outcome = "retry"
            raise
        finally:
            _run_ended(job, clock.end(outcome), outcome)


def _work(job: Job) -> str:
    """The job's outcome: done, failed or cancelled; RetryLater when it is to be sent again."""
    try:
        with Heartbeat(job.pk), tempfile.TemporaryFile() as spool:
            extracted, passages = _extract(job)
            count = _embed(job, passages, spool)
            if not count:
                raise AppError("empty_content", f"No text was found in {job.source.title}.")
            _progress(job, stage=Job.Stage.STORING, progress=97)
            spool.seek(0)
            chunks_replace(source_id=job.source_id, batches=_spooled(spool), extracted=extracted)
    except Cancelled:
        logger.info("job %s was cancelled", job.pk)
        return "cancelled"
    except SoftTimeLimitExceeded:
        # Raised wherever the job was; an open storing transaction has been rolled back on the way.
        logger.warning("job %s reached its time limit", job.pk)
        _finish(job, status=Job.Status.FAILED, error_code="time_limit", error_message=_TIME_LIMIT)
        return "failed"
    except AppError as exc:
        _finish(job, status=Job.Status.FAILED, error_code=exc.code, error_message=exc.message)
        return "failed"
    except TRANSIENT as exc:
        _retry_or_fail(job, exc)
        return "failed"
    except Exception:
        logger.exception("job %s failed", job.pk)
        _finish(job, status=Job.Status.FAILED, error_code="internal_error", error_message=_INTERNAL)
        raise
    _finish(job, status=Job.Status.DONE, stage=Job.Stage.DONE, progress=100)
    return "done"


def _stage_ended(job: Job, stage: str, seconds: float, outcome: str) -> None:
    kind = job.source.kind
    metrics.observe("job_stage_duration_seconds", seconds, kind=kind, stage=stage, outcome=outcome)
    logs.event(
        logger, "job stage", job=job.pk, kind=kind, stage=stage, duration_ms=round(seconds * 1000, 1), outcome=outcome
    )


def _run_ended(job: Job, seconds: float, outcome: str) -> None:
    kind = job.source.kind
    metrics.observe("job_duration_seconds", seconds, kind=kind, outcome=outcome)
    logs.event(
        logger,
        "job",
        job=job.pk,
        kind=kind,
        attempt=job.attempts,
        duration_ms=round(seconds * 1000, 1),
        outcome=outcome,
        error=job.error_code if outcome == "failed" else "",
    )


_INTERNAL = "Processing failed unexpectedly; try Reprocess. The error is in the worker's log."
_TIME_LIMIT = (
    "Processing this file took longer than the time limit allows, so it was stopped and nothing of it "
    "was kept; it may be too large: try splitting it."
)


def _retry_or_fail(job: Job, exc: Exception) -> None:
    if job.attempts >= settings.JOB_MAX_ATTEMPTS:
        logger.error("job %s failed after %s attempts: %r", job.pk, job.attempts, exc)
        _finish(job, status=Job.Status.FAILED, error_code="internal_error", error_message=_INTERNAL)
        return
    countdown = 5 * 2 ** (job.attempts - 1)
    logger.warning("job %s hit %r; retrying in %s s", job.pk, exc, countdown)
    Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
        status=Job.Status.QUEUED, stage=Job.Stage.QUEUED, progress=0, updated_at=timezone.now()
    )
    raise RetryLater(countdown) from exc


def _extract(job: Job) -> tuple[Extracted, PassageSource]:
    source = job.source
    if source.kind == Source.Kind.NOTE:
        _progress(job, stage=Job.Stage.CHUNKING, progress=10)
        # The note's text is not a segment too: the passages are read from `source.text` itself.
        extracted = Extracted(segments=[])
        return extracted, lambda: _note_passages(source.title, source.text)
    if source.kind == Source.Kind.CALENDAR:
        return _calendar_extract(job)
    if source.kind == Source.Kind.URL:
        return _web_page_extract(job)
    if source.kind == Source.Kind.IMAGE:
        return _image_extract(job)
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
    return extracted, lambda: _file_passages(source, extracted)


def _calendar_extract(job: Job) -> tuple[Extracted, PassageSource]:
    """A calendar's events over the window around its upload (the same window when it is reprocessed)."""
    from ingestion.extract import calendar

    source = job.source
    _progress(job, stage=Job.Stage.EXTRACTING, progress=1)
    read = calendar.extract(
        _file_path(source),
        zone=source.owner.zone,
        since=source.created_at - timedelta(days=settings.CALENDAR_DAYS_BEFORE),
        until=source.created_at + timedelta(days=settings.CALENDAR_DAYS_AFTER),
        name=source.metadata.get("filename") or source.title,
    )
    _progress(job, stage=Job.Stage.CHUNKING, progress=20)
    passages = [
        Passage(text=event.text, anchor=event.anchor, context=f"{source.title}, calendar", at=event.start)
        for event in read.events
    ]
    return Extracted(segments=[], metadata=read.metadata), lambda: iter(passages)


def _web_page_extract(job: Job) -> tuple[Extracted, PassageSource]:
    """The page fetched again and read (a reprocessed page is the page as it is now); its passages
    anchored by its headings, as a note's."""
    from ingestion.extract import web

    source = job.source
    _progress(job, stage=Job.Stage.EXTRACTING, progress=1)
    page = web.extract(
        source.metadata["url"],
        lambda done: _progress(job, stage=Job.Stage.EXTRACTING, progress=1 + int(19 * done)),
        zone=source.owner.zone,
    )
    text = page.text or ""
    storage_quota_check(owner=source.owner, adding=len(text.encode()) - source.size)
    _progress(job, stage=Job.Stage.CHUNKING, progress=20)
    title = source.title if source.metadata.get("title_from") == "user" else (page.title or source.title)
    return page, lambda: _note_passages(title, text)


def _image_extract(job: Job) -> tuple[Extracted, PassageSource]:
    """The text read in the image and the caption the person typed: each a passage (or several) of its
    own; an image with neither fails as `image_no_text`."""
    from ingestion.extract import image

    source = job.source
    _progress(job, stage=Job.Stage.EXTRACTING, progress=1)
    read = image.extract(
        _file_path(source),
        lambda done: _progress(job, stage=Job.Stage.EXTRACTING, progress=1 + int(49 * done)),
        zone=source.owner.zone,
    )
    if not read.segments and not source.text.strip():
        no_ocr = "" if read.metadata.get("ocr") else " (text recognition is not installed on this server)"
        raise AppError(
            "image_no_text",
            f"No text could be read in this image{no_ocr}, and it has no caption, so there is nothing to search "
            "in it. Add it again with a caption that says what it shows.",
        )
    _progress(job, stage=Job.Stage.CHUNKING, progress=51)
    caption = [
        Passage(text=piece.text, anchor={"heading": [CAPTION]}, context=source.title, lines=False)
        for piece in chunk_text(source.text)
    ]
    context = f"{source.title}, {image.TEXT_HEADING.lower()}" + (f" ({source.text[:200]})" if source.text else "")
    read_text = [
        Passage(text=piece.text, anchor=segment.anchor, context=context, lines=False)
        for segment in read.segments
        for piece in chunk_text(segment.text)
    ]
    return read, lambda: iter(caption + read_text)


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


def _note_passages(title: str, text: str) -> Iterator[Passage]:
    for piece in iter_chunk_markdown(text):
        yield Passage(
            text=piece.text, anchor={"heading": list(piece.heading)}, context=" › ".join([title, *piece.heading])
        )


def _file_passages(source: Source, extracted: Extracted) -> Iterator[Passage]:
    if source.kind == Source.Kind.AUDIO:
        yield from _audio_passages(source.title, extracted.segments)
        return
    for segment in extracted.segments:
        for piece in chunk_text(segment.text):
            yield Passage(
                text=piece.text,
                anchor={"page": segment.anchor["page"]},
                context=f"{source.title}, page {segment.anchor['page']}",
                lines=False,
            )


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


def embedding_inputs(batch: list[Passage]) -> tuple[list[str], np.ndarray]:
    """What is embedded for `batch`: each passage, then its sentences (`Passage.sentences`), each with
    the passage's context — and where each passage's texts start, with the end last."""
    split = [passage.sentences for passage in batch]
    texts = [
        f"{passage.context}\n{text}"
        for passage, parts in zip(batch, split, strict=True)
        for text in [passage.text, *parts]
    ]
    return texts, np.cumsum([0] + [1 + len(parts) for parts in split])


def _embed(job: Job, passages: PassageSource, spool: IO[bytes]) -> int:
    """Embed the passages batch by batch into `spool`; the number of passages.

    The passages are walked twice, once to count them for the progress bar: chunking costs a
    fraction of embedding, and holding them all to count them is what memory cannot afford.
    """
    total = sum(1 for _ in passages())
    start_at, done = job.progress, 0
    walk = passages()
    while batch := list(itertools.islice(walk, settings.EMBEDDING_BATCH_SIZE)):
        texts, starts = embedding_inputs(batch)
        vectors = embed_texts(texts)
        record: Batch = (
            batch,
            vectors[starts[:-1]].astype(np.float32, copy=False),
            [vectors[start + 1 : end].astype(np.float16) for start, end in itertools.pairwise(starts)],
        )
        pickle.dump(record, spool, protocol=pickle.HIGHEST_PROTOCOL)
        done += len(batch)
        _progress(job, stage=Job.Stage.EMBEDDING, progress=start_at + int((96 - start_at) * done / total))
    return done


def _spooled(spool: IO[bytes]) -> Iterator[Batch]:
    while True:
        try:
            yield pickle.load(spool)  # noqa: S301 — our own file, written by this process
        except EOFError:
            return


def chunks_replace(*, source_id: int, batches: Iterable[Batch], extracted: Extracted) -> None:
    """Make the source's chunks exactly the passages of `batches`, in one transaction.

    Chunks are upserted on (source, ordinal), so a reprocessed source keeps its chunk ids and the
    citations pointing at them; surplus old chunks are deleted. Rows are written STORE_BATCH_ROWS at a
    time as `batches` yields them, so memory holds one batch; a failure anywhere rolls all of it back.
    """
    with transaction.atomic():
        source = Source.objects.select_for_update().filter(pk=source_id).first()
        if source is None:
            raise Cancelled()
        changed = _apply_file_facts(source, extracted)
        zone = source.owner.zone  # the zone the owner's passages' dates are read in
        rows: list[Chunk] = []
        count = 0
        for passages, vectors, sentence_vectors in batches:
            for passage, vector, sentence_vector in zip(passages, vectors, sentence_vectors, strict=True):
                rows.append(_chunk_row(source, zone, count, passage, vector, sentence_vector))
                count += 1
            if len(rows) >= STORE_BATCH_ROWS:
                _chunks_upsert(rows)
                rows = []
        _chunks_upsert(rows)
        Chunk.objects.filter(source=source, ordinal__gte=count).delete()
        source.status = Source.Status.READY
        source.metadata["chunks"] = count
        source.save(update_fields=["status", "metadata", *changed])


def _chunk_row(
    source: Source, zone: ZoneInfo, ordinal: int, passage: Passage, vector: np.ndarray, sentences: np.ndarray
) -> Chunk:
    occurred_at = passage.at or source.occurred_at + timedelta(seconds=passage.offset)
    return Chunk(
        source=source,
        owner_id=source.owner_id,
        ordinal=ordinal,
        text=passage.text,
        anchor=passage.anchor,
        occurred_at=occurred_at,
        mentions=temporal.mentioned_times(passage.text, occurred_at, zone),
        embedding=vector,
        sentence_embeddings=list(sentences),
    )


def _chunks_upsert(rows: list[Chunk]) -> None:
    if rows:
        Chunk.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["source", "ordinal"],
            update_fields=["text", "anchor", "occurred_at", "mentions", "embedding", "sentence_embeddings"],
        )
        # With DEBUG on (`make run`'s default) Django keeps the SQL of the last 9,000 statements, and
        # each of these carries 100 vectors as text: a 50 MB note's worker grew past a gigabyte.
        reset_queries()


def _apply_file_facts(source: Source, extracted: Extracted) -> list[str]:
    """Take what extraction found about the source; the fields it changed besides metadata."""
    source.metadata.update(extracted.metadata)
    changed = ["occurred_at"]
    if extracted.occurred_at is not None and source.metadata.get("occurred_at_from") != "user":
        source.occurred_at = extracted.occurred_at
        source.metadata["occurred_at_from"] = "file"
    # A title the person typed wins over one the content gives.
    if extracted.title and source.metadata.get("title_from") != "user":
        source.title = extracted.title[:TITLE_MAX_CHARS]
        changed.append("title")
    if extracted.text is not None:
        source.text, source.size = extracted.text, len(extracted.text.encode())
        changed += ["text", "size"]
    return changed


def _progress(job: Job, *, stage: str, progress: int) -> None:
    """Record progress; the same UPDATE tells whether the job was cancelled or deleted meanwhile."""
    progress = max(0, min(progress, 99))
    timing.stage(stage)
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
