import threading
from datetime import timedelta
from typing import Any

from celery import Task, shared_task
from celery.signals import worker_process_init
from django.conf import settings

from ingestion import pipeline, services
from ingestion.embeddings import get_embedder


@worker_process_init.connect
def load_embedding_model(**_: Any) -> None:
    """Load the model in each pool process before its first job, so that job's progress moves at once.

    In a thread: Celery gives worker_process_init handlers only a few seconds, loading takes more.
    """
    threading.Thread(target=get_embedder, name="load-embedding-model", daemon=True).start()


@shared_task(bind=True, name="ingestion.tasks.process_job", max_retries=settings.JOB_MAX_ATTEMPTS)
def process_job(self: Task, job_id: int) -> None:
    try:
        pipeline.job_process(job_id=job_id)
    except pipeline.RetryLater as exc:
        raise self.retry(countdown=exc.countdown) from exc


@shared_task(name="ingestion.tasks.requeue_stuck_jobs")
def requeue_stuck_jobs() -> list[int]:
    return services.jobs_requeue_stuck(
        older_than=timedelta(seconds=settings.JOB_STUCK_AFTER_SECONDS), max_attempts=settings.JOB_MAX_ATTEMPTS
    )
