import threading
from typing import Any

from celery import shared_task
from celery.signals import worker_process_init

from ingestion import services
from ingestion.embeddings import get_embedder


@worker_process_init.connect
def load_embedding_model(**_: Any) -> None:
    """Load the model in each pool process before its first job, so that job's progress moves at once.

    In a thread: Celery gives worker_process_init handlers only a few seconds, loading takes more.
    """
    threading.Thread(target=get_embedder, name="load-embedding-model", daemon=True).start()


@shared_task(name="ingestion.tasks.process_job")
def process_job(job_id: int) -> None:
    services.job_process(job_id=job_id)
