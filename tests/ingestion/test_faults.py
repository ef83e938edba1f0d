"""Faults on real parts: a worker process killed mid-job, a source deleted while its job runs."""

import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from ingestion import services
from ingestion.models import Chunk, Job
from tests.factories import ApiClient
from tests.processes import kill, start_worker_process

pytestmark = pytest.mark.django_db(transaction=True)
# Enough passages (one per entry) that embedding them takes several seconds on two cores.
LONG_NOTE = "\n\n".join(
    f"## Entry {i}\n\nOn day {i} the team reviewed item {i * 7} and logged {i * 3} findings about the depot."
    for i in range(500)
)


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_a_job_survives_its_worker_being_killed(api: ApiClient, tmp_path: Path) -> None:
    body = api.post("/notes", {"title": "Depot log", "text": LONG_NOTE}).json()
    worker = start_worker_process(tmp_path / "worker.log")
    try:
        wait_until(lambda: Job.objects.get(pk=body["job_id"]).stage == "embedding", 120, "embedding to start")
        kill(worker)
    finally:
        if worker.poll() is None:
            kill(worker)
    job = Job.objects.get(pk=body["job_id"])
    assert job.status == "running" and job.progress < 100
    # The sweeper finds the job silent (a zero grace period stands in for JOB_STUCK_AFTER_SECONDS).
    assert services.jobs_requeue_stuck(older_than=timedelta(0), max_attempts=3) == [job.pk]
    worker = start_worker_process(tmp_path / "worker.log")
    try:
        wait_until(lambda: Job.objects.get(pk=job.pk).status == "done", 180, "the job to finish")
    finally:
        kill(worker)
    job.refresh_from_db()
    assert job.attempts == 2
    chunks = Chunk.objects.filter(source_id=body["source_id"])
    ordinals = list(chunks.values_list("ordinal", flat=True))
    assert len(ordinals) == len(set(ordinals)) == chunks.count() > 100
    assert max(ordinals) == len(ordinals) - 1


def test_deleting_a_source_mid_job_ends_it_cleanly_and_the_worker_goes_on(api: ApiClient, celery_worker: None) -> None:
    body = api.post("/notes", {"title": "Depot log", "text": LONG_NOTE}).json()
    wait_until(lambda: Job.objects.filter(pk=body["job_id"], stage="embedding").exists(), 120, "embedding to start")
    assert api.delete(f"/sources/{body['source_id']}").status_code == 204
    nxt = api.post("/notes", {"text": "After the deletion, the worker still takes notes."}).json()
    assert api.wait_for_job(nxt["job_id"], timeout=120)["status"] == "done"
    assert not Chunk.objects.filter(source_id=body["source_id"]).exists()
    assert not Job.objects.filter(pk=body["job_id"]).exists()


def test_a_cancelled_job_stops_and_keeps_nothing(api: ApiClient, celery_worker: None) -> None:
    body = api.post("/notes", {"title": "Depot log", "text": LONG_NOTE}).json()
    wait_until(lambda: Job.objects.filter(pk=body["job_id"], stage="embedding").exists(), 120, "embedding to start")
    assert api.post(f"/jobs/{body['job_id']}/cancel").json()["status"] == "cancelled"
    nxt = api.post("/notes", {"text": "The next note is processed."}).json()
    assert api.wait_for_job(nxt["job_id"], timeout=120)["status"] == "done"
    assert Job.objects.get(pk=body["job_id"]).status == "cancelled"
    assert not Chunk.objects.filter(source_id=body["source_id"]).exists()
