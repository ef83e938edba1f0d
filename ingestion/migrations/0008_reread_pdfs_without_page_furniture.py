"""PDF pages are read without their running heads, footers, page numbers and stamps
(ingestion/extract/pdf.py, `without_page_furniture`; issue 19).

Every ready PDF is queued once to be read, chunked and embedded again, the way 0005 did it: queued
jobs dated back past `JOB_STUCK_AFTER_SECONDS`, which the periodic sweeper sends to the workers. Until
its job runs a PDF keeps its old passages.
"""

from datetime import timedelta

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from django.utils import timezone

ACTIVE = ["queued", "running"]


def queue_rereading(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    Source = apps.get_model("ingestion", "Source")
    Job = apps.get_model("ingestion", "Job")
    long_ago = timezone.now() - timedelta(days=1)
    pdfs = Source.objects.filter(kind="pdf", status="ready").exclude(jobs__status__in=ACTIVE)
    jobs = [Job(owner_id=owner_id, source_id=pk) for pk, owner_id in pdfs.values_list("pk", "owner_id").iterator()]
    created = Job.objects.bulk_create(jobs, batch_size=1000)
    # `updated_at` is auto_now: backdate it afterwards so the sweeper sees the jobs as unsent.
    Job.objects.filter(pk__in=[job.pk for job in created]).update(updated_at=long_ago)


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0007_rechunk_notes_typed_line_by_line")]

    operations = [migrations.RunPython(queue_rereading, migrations.RunPython.noop, elidable=True)]
