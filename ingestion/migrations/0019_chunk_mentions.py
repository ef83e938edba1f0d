"""Each passage keeps the days its text speaks of (`Chunk.mentions`), so a question about a time finds
the notes written before or after it that tell of it (chat/selectors.py, issue 19).

Stored passages are read here, in their owner's zone, without being embedded again.
"""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

import ingestion.models
from accounts.models import zone_named
from chat.temporal import mentioned_times

BATCH = 2000


def read_mentions(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    chunk_model = apps.get_model("ingestion", "Chunk")
    rows = chunk_model.objects.values_list("id", "text", "occurred_at", "owner__time_zone").order_by("id")
    found = []
    for chunk_id, text, occurred_at, zone in rows.iterator(chunk_size=BATCH):
        mentions = mentioned_times(text, occurred_at, zone_named(zone))
        found.append(chunk_model(id=chunk_id, mentions=mentions))
        if len(found) >= BATCH:
            chunk_model.objects.bulk_update(found, ["mentions"])
            found = []
    chunk_model.objects.bulk_update(found, ["mentions"])


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0018_chunk_sentence_embeddings"), ("accounts", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="chunk",
            name="mentions",
            field=ingestion.models.DateTimeMultiRangeField(blank=True, default=list, null=True),
        ),
        migrations.RunPython(read_mentions, migrations.RunPython.noop, elidable=True),
    ]
