"""Each passage's sentences are embedded too (`Chunk.sentence_embeddings`), for the search's sentence
ranker (chat/selectors.py, issue 19).

Ready notes and PDFs are queued once to be embedded again, the way 0007 and 0008 did it: queued jobs
dated back past `JOB_STUCK_AFTER_SECONDS`, which the periodic sweeper sends to the workers. Recordings,
calendars, web pages and images are not (a recording would be transcribed again): until one is
reprocessed its column stays NULL and the sentence ranker reads its passage's own embedding.
"""

from datetime import timedelta

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from django.utils import timezone

import ingestion.models

ACTIVE = ["queued", "running"]


def queue_embedding(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    Source = apps.get_model("ingestion", "Source")
    Job = apps.get_model("ingestion", "Job")
    long_ago = timezone.now() - timedelta(days=1)
    sources = Source.objects.filter(kind__in=["note", "pdf"], status="ready").exclude(jobs__status__in=ACTIVE)
    jobs = [Job(owner_id=owner_id, source_id=pk) for pk, owner_id in sources.values_list("pk", "owner_id").iterator()]
    created = Job.objects.bulk_create(jobs, batch_size=1000)
    # `updated_at` is auto_now: backdate it afterwards so the sweeper sees the jobs as unsent.
    Job.objects.filter(pk__in=[job.pk for job in created]).update(updated_at=long_ago)


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0017_rechunk_notes_typed_in_lower_case")]

    operations = [
        migrations.AddField(
            model_name="chunk",
            name="sentence_embeddings",
            field=ingestion.models.HalfVectorArrayField(blank=True, dimensions=384, null=True),
        ),
        migrations.RunPython(queue_embedding, migrations.RunPython.noop, elidable=True),
    ]
