"""Faults on real parts: a worker process killed mid-job, no worker at all, Redis restarted under the
web process and the worker, a source deleted while its job runs."""

import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings

from ingestion import services
from ingestion.models import Chunk, Job
from tests.factories import PASSWORD, ApiClient
from tests.processes import app_env, free_port, kill, redis_process, request, start_worker_process, web_process

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


def test_notes_saved_while_no_worker_runs_wait_and_are_processed_when_one_returns(
    api: ApiClient, tmp_path: Path
) -> None:
    body = api.post("/notes", {"title": "Quiet day", "text": "The boiler man comes on Thursday at nine."}).json()
    time.sleep(3)
    assert api.get(f"/jobs/{body['job_id']}").json()["status"] == "queued"
    worker = start_worker_process(tmp_path / "worker.log")
    try:
        assert api.wait_for_job(body["job_id"], timeout=120)["status"] == "done"
    finally:
        kill(worker)
    found = api.get("/search", q="when does the boiler man come").json()["results"]
    assert found and found[0]["source_title"] == "Quiet day"


def _sweep(env: dict[str, str]) -> None:
    """The stuck-job sweeper, as celery beat runs it, in a process on the given Redis."""
    code = (
        "import django; django.setup(); from datetime import timedelta; from ingestion import services; "
        "print(services.jobs_requeue_stuck(older_than=timedelta(0), max_attempts=3))"
    )
    env = {**env, "DJANGO_SETTINGS_MODULE": "secondbrain.settings"}
    subprocess.run([sys.executable, "-c", code], cwd=settings.BASE_DIR, env=env, check=True, timeout=120)


def test_redis_restarted_during_ingestion_loses_no_job(tmp_path: Path) -> None:
    port = free_port()
    redis = redis_process(port, tmp_path / "redis.log")
    env = app_env(REDIS_URL=f"redis://127.0.0.1:{port}/0", SIGNUP_OPEN="true")
    web, url = web_process(env, tmp_path / "daphne.log")
    worker = start_worker_process(tmp_path / "worker.log", env=env)
    try:
        status, body = request(f"{url}/api/auth/register", body={"username": "steadfast", "password": PASSWORD})
        assert status == 201, body
        token = body["token"]

        def save(title: str, text: str) -> dict[str, int]:
            status, saved = request(f"{url}/api/notes", token=token, body={"title": title, "text": text})
            assert status == 202, saved
            return saved

        long = save("Depot log", LONG_NOTE)
        wait_until(lambda: Job.objects.filter(pk=long["job_id"], stage="embedding").exists(), 120, "embedding")
        kill(redis)
        # With the queue down a note is still taken; it waits for the queue.
        during = save("Written in the outage", "The spare key is under the blue flowerpot.")
        redis = redis_process(port, tmp_path / "redis.log")
        wait_until(lambda: Job.objects.get(pk=long["job_id"]).status == "done", 180, "the running job to end")
        after = save("Written after", "The bins go out on Tuesday night.")
        wait_until(lambda: Job.objects.get(pk=after["job_id"]).status == "done", 180, "a note saved after it")
        assert Job.objects.get(pk=during["job_id"]).status == "queued"
        _sweep(env)
        wait_until(lambda: Job.objects.get(pk=during["job_id"]).status == "done", 180, "the note of the outage")
        status, found = request(f"{url}/api/search?q=where+is+the+spare+key", token=token)
        assert status == 200 and found["results"][0]["source_title"] == "Written in the outage", found
    finally:
        for process in (worker, web, redis):
            if process.poll() is None:
                kill(process)
    for saved in (long, during, after):
        ordinals = list(Chunk.objects.filter(source_id=saved["source_id"]).values_list("ordinal", flat=True))
        assert ordinals and sorted(ordinals) == list(range(len(ordinals))), saved
