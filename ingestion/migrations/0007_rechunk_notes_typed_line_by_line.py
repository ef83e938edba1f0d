"""A note's long paragraph is now cut between its lines, as typed (ingestion/chunking.py, issue 19).

Notes typed line by line, with no blank lines, were one paragraph to the chunker and were cut between
sentences wherever 60 words ran out. Only notes with such a paragraph (over 180 words, several lines)
change; they are queued once to be chunked and embedded again, the way 0005 did it: queued jobs dated
back past `JOB_STUCK_AFTER_SECONDS`, which the periodic sweeper sends to the workers. Until its job
runs a note keeps its old passages.
"""

import re
from collections.abc import Callable
from datetime import timedelta

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from django.utils import timezone

ACTIVE = ["queued", "running"]
PARAGRAPH_MAX_WORDS = 180  # ingestion.chunking.PARAGRAPH_MAX_WORDS when this was written


def _has_typed_paragraph(text: str) -> bool:
    return any(
        "\n" in paragraph.strip() and len(paragraph.split()) > PARAGRAPH_MAX_WORDS
        for paragraph in re.split(r"\n\s*\n", text)
    )


def queue_rechunking(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    queue_notes(apps, _has_typed_paragraph)


def queue_notes(apps: StateApps, changes: Callable[[str], bool]) -> None:
    """Queue once every ready note whose text `changes` (a later rechunking migration reuses this)."""
    Source = apps.get_model("ingestion", "Source")
    Job = apps.get_model("ingestion", "Job")
    long_ago = timezone.now() - timedelta(days=1)
    notes = Source.objects.filter(kind="note", status="ready").exclude(jobs__status__in=ACTIVE)
    jobs = [
        Job(owner_id=owner_id, source_id=pk)
        for pk, owner_id, text in notes.values_list("pk", "owner_id", "text").iterator()
        if changes(text)
    ]
    created = Job.objects.bulk_create(jobs, batch_size=1000)
    # `updated_at` is auto_now: backdate it afterwards so the sweeper sees the jobs as unsent.
    Job.objects.filter(pk__in=[job.pk for job in created]).update(updated_at=long_ago)


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0006_chunk_owner_terms_gin")]

    operations = [migrations.RunPython(queue_rechunking, migrations.RunPython.noop, elidable=True)]
