"""Jobs that end (issue 21): a heartbeat by time, a cap on attempts, time limits, memory that stays flat."""

import json
import signal
import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.core.files.uploadedfile import SimpleUploadedFile

from accounts.models import User
from ingestion import embeddings, services
from ingestion.chunking import chunk_markdown
from ingestion.embeddings import embed_texts
from ingestion.models import Chunk, Job, Source
from ingestion.pipeline import job_process
from tests.factories import ApiClient
from tests.ingestion.test_faults import LONG_NOTE, wait_until
from tests.processes import kill, start_worker_process, stop

DATA = Path(__file__).resolve().parent.parent / "data"


def entries(count: int) -> str:
    return "\n\n".join(
        f"## Entry {i}\n\nItem {i * 7} was checked at desk {i % 17} in week {i % 52}." for i in range(count)
    )


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_moves_while_one_long_transcription_piece_runs(
    api: ApiClient, celery_worker: None, settings: Any
) -> None:
    settings.JOB_HEARTBEAT_SECONDS = 1
    response = api.client.post(
        "/api/uploads",
        {"file": SimpleUploadedFile("jfk.flac", (DATA / "audio" / "jfk.flac").read_bytes())},
        headers=api._headers(),
    )
    job_id = response.json()["job_id"]
    # The 11 s recording is one piece: its progress stays at 1 % until whisper is done with it.
    beats: set[datetime] = set()
    wait_until(lambda: Job.objects.get(pk=job_id).stage == Job.Stage.TRANSCRIBING, 60, "transcription to start")
    while (job := Job.objects.get(pk=job_id)).stage == Job.Stage.TRANSCRIBING and job.progress == 1:
        beats.add(job.updated_at)
        time.sleep(0.1)
    assert len(beats) >= 3, beats
    assert api.wait_for_job(job_id)["status"] == "done"


@pytest.mark.django_db(transaction=True)
def test_a_job_that_keeps_stopping_its_worker_is_sent_again_then_fails_after_its_attempts(
    api: ApiClient, tmp_path: Path
) -> None:
    body = api.post("/notes", {"title": "Depot log", "text": LONG_NOTE}).json()
    job_id = body["job_id"]
    for attempt in (1, 2):
        worker = start_worker_process(tmp_path / "worker.log")
        try:
            wait_until(
                lambda: Job.objects.filter(pk=job_id, attempts=attempt, status="running", stage="embedding").exists(),  # noqa: B023
                120,
                f"attempt {attempt} to reach embedding",
            )
        finally:
            kill(worker)  # as the kernel's OOM killer would
        # A zero grace period stands in for JOB_STUCK_AFTER_SECONDS.
        requeued = services.jobs_requeue_stuck(older_than=timedelta(0), max_attempts=2)
        assert requeued == ([job_id] if attempt == 1 else []), attempt
    job = api.get(f"/jobs/{job_id}").json()
    assert (job["status"], job["error_code"]) == ("failed", "too_many_attempts")
    assert job["error_message"] == (
        "This file stopped the worker 2 times (it may be too large or damaged); it was not processed."
    )
    assert Source.objects.get(pk=body["source_id"]).status == Source.Status.FAILED
    assert not Chunk.objects.filter(source_id=body["source_id"]).exists()
    assert services.jobs_requeue_stuck(older_than=timedelta(0), max_attempts=2) == []


@pytest.mark.django_db(transaction=True)
def test_a_job_past_its_soft_time_limit_fails_with_its_code_and_keeps_nothing(
    api: ApiClient, tmp_path: Path, settings: Any
) -> None:
    settings.JOB_TIME_LIMITS = {"ingest": (2, 120), "transcribe": (2, 120)}
    # Far more than 2 s of work on any machine: 3,000 passages were embedded within the limit on an idle one.
    body = api.post("/notes", {"title": "Depot log", "text": entries(30000)}).json()
    # The prefork pool, as in production: the solo pool has no time limits.
    worker = start_worker_process(tmp_path / "worker.log", pool="prefork")
    try:
        job = api.wait_for_job(body["job_id"], timeout=120)
        assert (job["status"], job["error_code"]) == ("failed", "time_limit"), job
        assert "took longer than the time limit" in job["error_message"]
        assert not Chunk.objects.filter(source_id=body["source_id"]).exists()
        assert Source.objects.get(pk=body["source_id"]).status == Source.Status.FAILED
        settings.JOB_TIME_LIMITS = {"ingest": (60, 120), "transcribe": (60, 120)}
        nxt = api.post("/notes", {"text": "The worker goes on after a job that ran out of time."}).json()
        assert api.wait_for_job(nxt["job_id"], timeout=120)["status"] == "done"
    finally:
        stop(worker)


@pytest.mark.django_db
def test_time_running_out_while_a_jobs_progress_is_sent_stops_the_job(
    user: User, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """Progress is a courtesy whose failures are only logged, but the time limit's signal lands wherever
    the job is: swallowed there, the job ran on to the hard limit's kill (the test above, when the machine
    was loaded, failed so)."""
    job = services.note_create(owner=user, text="Progress goes to a Redis that never answers.", title="Depot log")
    silent = socket.create_server(("127.0.0.1", 0))  # takes connections and never answers them
    address = f"redis://127.0.0.1:{silent.getsockname()[1]}"
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [address]}}
    }

    def time_is_up(*_: object) -> None:
        raise SoftTimeLimitExceeded  # as celery's prefork child raises it

    previous = signal.signal(signal.SIGALRM, time_is_up)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(SoftTimeLimitExceeded), django_capture_on_commit_callbacks(execute=True):
            services.notify(job, "Depot log")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        silent.close()  # the send still waiting in its thread ends with a connection error


@pytest.mark.django_db
def test_a_note_of_many_batches_is_stored_whole_while_memory_holds_one_batch(user: User, settings: Any) -> None:
    settings.EMBEDDING_BATCH_SIZE = 16
    settings.DEBUG = True  # `make run`'s default, under which Django keeps each statement's SQL
    text = entries(1500)
    pieces = chunk_markdown(text)
    assert len(pieces) == 1500
    job = services.note_create(owner=user, text=text, title="Depot log")
    embed_texts(["load the model before measuring"])
    tracemalloc.start()
    try:
        at_rest = tracemalloc.get_traced_memory()[0]
        job_process(job_id=job.pk)
        peak = tracemalloc.get_traced_memory()[1] - at_rest
    finally:
        tracemalloc.stop()
    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    chunks = list(Chunk.objects.filter(source_id=job.source_id).order_by("ordinal"))
    assert [chunk.ordinal for chunk in chunks] == list(range(1500))
    assert [chunk.text for chunk in chunks] == [piece.text for piece in pieces]
    # Each vector is its own passage's, across the batches' seams.
    sample = [0, 15, 16, 17, 800, 1499]
    expected = embed_texts([f"Depot log › {' › '.join(pieces[i].heading)}\n{pieces[i].text}" for i in sample])
    assert np.allclose(np.array([chunks[i].embedding for i in sample]), expected, atol=1e-4)
    # All 1,500 vectors as Python floats would be 18 MB; the note's text is 0.1 MB.
    assert peak < 6 * 2**20, f"{peak / 2**20:.1f} MB"


class FailingEmbeddings(BaseHTTPRequestHandler):
    """An OpenAI-compatible embeddings server that answers `good` requests, then refuses the rest."""

    good = 2
    served = 0

    def do_POST(self) -> None:
        texts = json.loads(self.rfile.read(int(self.headers["content-length"])))["input"]
        type(self).served += 1
        if type(self).served > self.good:
            self._send(400, {"error": {"message": "this input is refused", "type": "invalid_request_error"}})
            return
        data = [{"object": "embedding", "index": i, "embedding": [1.0] + [0.0] * 383} for i in range(len(texts))]
        self._send(
            200, {"object": "list", "model": "m", "data": data, "usage": {"prompt_tokens": 0, "total_tokens": 0}}
        )

    def _send(self, status: int, body: dict[str, Any]) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *_: Any) -> None:
        pass


@contextmanager
def failing_embeddings_for(settings: Any) -> Iterator[None]:
    """The app embeds through a FailingEmbeddings server while inside."""
    FailingEmbeddings.served = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), FailingEmbeddings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.EMBEDDING_PROVIDER, settings.EMBEDDING_MODEL = "openai", "m"
    settings.OPENAI_BASE_URL = f"http://127.0.0.1:{server.server_address[1]}/v1"
    embeddings._embedder.cache_clear()
    try:
        yield
    finally:
        server.shutdown()
        embeddings._embedder.cache_clear()


@pytest.mark.django_db
def test_a_reprocess_that_fails_mid_way_leaves_the_stored_passages_as_they_were(user: User, settings: Any) -> None:
    settings.EMBEDDING_BATCH_SIZE = 16
    job = services.note_create(owner=user, text=entries(100), title="Depot log")
    job_process(job_id=job.pk)
    source = Source.objects.get(pk=job.source_id)
    before = list(Chunk.objects.filter(source=source).order_by("ordinal").values_list("id", "text", "embedding"))
    assert len(before) == 100
    again = services.source_reprocess(source=source)
    with failing_embeddings_for(settings), pytest.raises(Exception, match="refused"):
        job_process(job_id=again.pk)
    again.refresh_from_db()
    assert (again.status, again.error_code) == (Job.Status.FAILED, "internal_error")
    after = list(Chunk.objects.filter(source=source).order_by("ordinal").values_list("id", "text", "embedding"))
    assert [(i, t) for i, t, _ in after] == [(i, t) for i, t, _ in before]
    assert all(np.array_equal(a[2], b[2]) for a, b in zip(after, before, strict=True))
    assert FailingEmbeddings.served == FailingEmbeddings.good + 1  # it failed on the third of seven batches


@pytest.mark.django_db
def test_a_new_note_that_fails_mid_way_keeps_no_passage(user: User, settings: Any) -> None:
    settings.EMBEDDING_BATCH_SIZE = 16
    job = services.note_create(owner=user, text=entries(100), title="Depot log")
    with failing_embeddings_for(settings), pytest.raises(Exception, match="refused"):
        job_process(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert not Chunk.objects.filter(source_id=job.source_id).exists()
    assert Source.objects.get(pk=job.source_id).status == Source.Status.FAILED
