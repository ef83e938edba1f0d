"""A paragraph (or a typed line) is now kept whole up to 100 words, not 180 (ingestion/chunking.py,
issue 19): longer ones are cut between sentences.

Notes with a paragraph or line of 101–180 words are queued once to be chunked and embedded again,
the way 0007 did it. PDFs were all queued by 0010 just before, and their jobs run with this chunker.
"""

import re
from datetime import timedelta

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from django.utils import timezone

ACTIVE = ["queued", "running"]
BEFORE, NOW = 180, 100  # ingestion.chunking.PARAGRAPH_MAX_WORDS before and after


def _changes(text: str) -> bool:
    units = [unit for paragraph in re.split(r"\n\s*\n", text) for unit in [paragraph, *paragraph.split("\n")]]
    return any(NOW < len(unit.split()) <= BEFORE for unit in units)


def queue_rechunking(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    Source = apps.get_model("ingestion", "Source")
    Job = apps.get_model("ingestion", "Job")
    long_ago = timezone.now() - timedelta(days=1)
    notes = Source.objects.filter(kind="note", status="ready").exclude(jobs__status__in=ACTIVE)
    jobs = [
        Job(owner_id=owner_id, source_id=pk)
        for pk, owner_id, text in notes.values_list("pk", "owner_id", "text").iterator()
        if _changes(text)
    ]
    created = Job.objects.bulk_create(jobs, batch_size=1000)
    # `updated_at` is auto_now: backdate it afterwards so the sweeper sees the jobs as unsent.
    Job.objects.filter(pk__in=[job.pk for job in created]).update(updated_at=long_ago)


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0010_reread_pdfs_outer_page_numbers")]

    operations = [migrations.RunPython(queue_rechunking, migrations.RunPython.noop, elidable=True)]
