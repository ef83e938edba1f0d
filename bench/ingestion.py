"""Ingestion benchmarks (issue 3). Each figure is printed beside a baseline measured in the same run.

- embedding: the whole note pipeline (claim, chunk, embed, store) vs the raw model's `encode` on
  the same texts (each passage and its sentences), in passages per second, and the model on the
  passages alone (what the sentences cost);
- pdf: pages per second of the pipeline on the 117-page lecture notes vs pypdf's text extraction alone;
- audio: real-time factor of the pipeline vs calling whisper directly on the same clips, and WER;
- upload: request → job row latency of `POST /api/uploads` vs the cheapest authenticated API read;
- delete: deleting a 10,000-chunk source in one statement vs Django's emulated cascade.

Run with `make bench` (or `python -m bench ingestion` with the services' variables set).
"""

import functools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import bench_database, setup_django, summary, timed

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
PASSAGES = 800


def main() -> None:
    setup_django()
    with bench_database():
        from accounts.models import User

        user = User.objects.create_user("bench", password="bench-password-123")
        embedding(user)
        pdf(user)
        audio(user)
        upload(user)
        delete(user)


def _note_text(count: int) -> str:
    """A note of `count` headed entries, each a passage of two sentences (each embedded too)."""
    return "\n\n".join(
        f"## Entry {i}\n\nOn day {i} the team reviewed item {i * 7} near the depot and logged {i * 3} findings. "
        f"The follow-up for case {i} was assigned to desk {i % 17}, with a deadline in week {i % 52}."
        for i in range(count)
    )


def _run_job(job_id: int) -> None:
    from ingestion.pipeline import job_process

    job_process(job_id=job_id)


def embedding(user: Any) -> None:
    """The pipeline against the embedder alone on the texts it embeds (each passage and its sentences,
    `embedding_inputs`): what claiming, chunking and storing add. And the embedder on the passages
    alone beside it: what embedding each passage's sentences costs."""
    from ingestion import services
    from ingestion.embeddings import get_embedder
    from ingestion.pipeline import _note_passages, embedding_inputs

    text = _note_text(PASSAGES)
    passages = list(_note_passages("Depot log", text))
    inputs, _ = embedding_inputs(passages)
    alone = [f"{passage.context}\n{passage.text}" for passage in passages]
    embedder = get_embedder()
    embedder.embed(inputs[:64])  # warm up both paths alike
    raw_seconds, _ = timed(lambda: embedder.embed(inputs))
    alone_seconds, _ = timed(lambda: embedder.embed(alone))
    job = services.note_create(owner=user, text=text, title="Depot log")
    pipeline_seconds, _ = timed(functools.partial(_run_job, job.pk))
    raw, piped, bare = (len(passages) / seconds for seconds in (raw_seconds, pipeline_seconds, alone_seconds))
    print(f"embedding: pipeline {piped:.1f} passages/s vs the embedder alone {raw:.1f} passages/s on the same "
          f"{len(passages)} passages and their {len(inputs) - len(passages)} sentences → {piped / raw:.0%} of raw "
          f"(target ≥ 80%); the embedder on the passages alone {bare:.1f} passages/s: the sentences cost "
          f"×{raw_seconds / alone_seconds:.2f}")  # fmt: skip


def pdf(user: Any) -> None:
    import pypdf
    from django.core.files.uploadedfile import SimpleUploadedFile

    from ingestion import services
    from ingestion.models import Job

    path = DATA / "pdf" / "academic_lecture_notes_GeoTopo_117p_de.pdf"
    raw_seconds, pages = timed(lambda: len([page.extract_text() for page in pypdf.PdfReader(path).pages]))
    job = services.upload_create(owner=user, upload=SimpleUploadedFile(path.name, path.read_bytes()))
    seconds, _ = timed(functools.partial(_run_job, job.pk))
    job = Job.objects.get(pk=job.pk)
    chunks = job.source.chunks.count()
    print(f"pdf: pipeline {pages / seconds:.1f} pages/s ({seconds:.1f} s for {pages} pages → {chunks} chunks, "
          f"status {job.status}) vs pypdf text alone {pages / raw_seconds:.1f} pages/s")  # fmt: skip


def audio(user: Any) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from ingestion import services
    from ingestion.extract import audio as extractor
    from tests.wer import wer

    clips = json.loads((DATA / "audio" / "transcripts.json").read_text())
    model = extractor.get_model()
    total_audio = direct = piped = 0.0
    errors: list[float] = []
    for clip in clips:
        path = DATA / "audio" / clip["file"]
        total_audio += clip["duration_s"]
        seconds, _ = timed(functools.partial(model.transcribe, str(path), **extractor.TRANSCRIBE_OPTIONS))
        direct += seconds
        job = services.upload_create(owner=user, upload=SimpleUploadedFile(path.name, path.read_bytes()))
        seconds, _ = timed(functools.partial(_run_job, job.pk))
        piped += seconds
        transcript = " ".join(job.source.chunks.order_by("ordinal").values_list("text", flat=True))
        errors.append(wer(clip["reference"], transcript))
    overhead = piped / direct - 1
    print(f"audio: pipeline real-time factor {piped / total_audio:.3f} vs whisper directly {direct / total_audio:.3f} "
          f"over {len(clips)} clips ({total_audio:.0f} s) → overhead {overhead:+.1%} (target < 10%); "
          f"WER mean {np.mean(errors):.3f}, max {max(errors):.3f}")  # fmt: skip


def upload(user: Any) -> None:
    from django.test import Client

    from accounts.services import token_create

    client = Client()
    headers = {"Authorization": f"Bearer {token_create(user=user)}"}
    uploads, reads = [], []
    for i in range(60):
        body = f"# Upload {i}\n\n{_note_text(20)}\n\nunique {i} {time.time_ns()}".encode()
        started = time.perf_counter()
        response = client.post("/api/uploads", {"file": _file(f"note-{i}.md", body)}, headers=headers)
        uploads.append(time.perf_counter() - started)
        assert response.status_code == 202, response.content
        started = time.perf_counter()
        assert client.get(f"/api/jobs/{response.json()['job_id']}", headers=headers).status_code == 200
        reads.append(time.perf_counter() - started)
    print(f"upload: POST /api/uploads (10 KB note) → job row {summary(uploads[10:])} (target p95 < 50 ms) "
          f"vs GET /api/jobs/{{id}} {summary(reads[10:])}")  # fmt: skip


def _file(name: str, content: bytes) -> Any:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content)


def delete(user: Any) -> None:
    from ingestion import services
    from ingestion.models import Source

    fast = _source_with_chunks(user, "fast", 10_000)
    slow = _source_with_chunks(user, "slow", 10_000)
    seconds, _ = timed(lambda: services.source_delete(source=fast))
    orm_seconds, _ = timed(lambda: Source.objects.filter(pk=slow.pk).delete())
    print(f"delete: a 10,000-chunk source in {seconds * 1000:.0f} ms (target < 1 s) "
          f"vs Django's emulated cascade {orm_seconds * 1000:.0f} ms")  # fmt: skip


def _source_with_chunks(user: Any, name: str, count: int) -> Any:
    from django.utils import timezone

    from ingestion.models import Chunk, Source

    source = Source.objects.create(
        owner=user, kind="note", title=name, text=name, mime_type="text/plain", size=1, sha256=name.ljust(64, "0")
    )
    vectors = np.random.default_rng(0).normal(size=(count, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    now = timezone.now()
    Chunk.objects.bulk_create(
        (Chunk(source=source, owner=user, ordinal=i, text=f"passage {i} of {name}", occurred_at=now, embedding=vectors[i])
         for i in range(count)),
        batch_size=1000,
    )  # fmt: skip
    return source
