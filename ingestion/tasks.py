from celery import shared_task

from ingestion import services


@shared_task(name="ingestion.tasks.process_job")
def process_job(job_id: int) -> None:
    services.job_process(job_id=job_id)
