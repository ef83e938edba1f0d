"""Passages are now packed to 60 words instead of 90 (ingestion/chunking.py, bench/RESULTS.md).

Every note and PDF is queued once to be chunked and embedded again. The migration only writes
queued jobs, dated back past `JOB_STUCK_AFTER_SECONDS`: the periodic sweeper (`requeue_stuck_jobs`,
every minute) sends them to the workers, so no broker is needed while migrating. Until its job runs
a source keeps its old passages, which stay searchable (a job replaces them in one transaction).
Audio is left alone: its passages are cut by time, and transcribing again would cost minutes each.
"""

from datetime import timedelta

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from django.utils import timezone

ACTIVE = ["queued", "running"]


def queue_rechunking(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    Source = apps.get_model("ingestion", "Source")
    Job = apps.get_model("ingestion", "Job")
    long_ago = timezone.now() - timedelta(days=1)
    sources = (
        Source.objects.filter(kind__in=["note", "pdf"], status="ready")
        .exclude(jobs__status__in=ACTIVE)
        .values_list("pk", "owner_id")
    )
    jobs = [Job(owner_id=owner_id, source_id=pk) for pk, owner_id in sources.iterator()]
    created = Job.objects.bulk_create(jobs, batch_size=1000)
    # `updated_at` is auto_now: backdate it afterwards so the sweeper sees the jobs as unsent.
    Job.objects.filter(pk__in=[job.pk for job in created]).update(updated_at=long_ago)


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0004_hnsw_ef_construction_128_inline_vectors")]

    operations = [migrations.RunPython(queue_rechunking, migrations.RunPython.noop, elidable=True)]
