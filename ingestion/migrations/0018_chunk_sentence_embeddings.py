"""Each passage's sentences are embedded too (`Chunk.sentence_embeddings`), for the search's sentence
ranker (chat/selectors.py, issue 19).

Ready notes and PDFs are queued once to be embedded again, the way 0007 and 0008 did it: queued jobs
dated back past `JOB_STUCK_AFTER_SECONDS`, which the periodic sweeper sends to the workers. Recordings,
calendars, web pages and images are not (a recording would be transcribed again): until one is
reprocessed its column stays NULL and the sentence ranker reads its passage's own embedding.
"""

import importlib

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

import ingestion.models

queue_notes = importlib.import_module("ingestion.migrations.0007_rechunk_notes_typed_line_by_line").queue_notes
queue_pdfs = importlib.import_module("ingestion.migrations.0008_reread_pdfs_without_page_furniture").queue_rereading


def queue_embedding(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    queue_notes(apps, lambda text: True)
    queue_pdfs(apps, schema_editor)


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
