"""A paragraph (or a typed line) is now kept whole up to 100 words, not 180 (ingestion/chunking.py,
issue 19): longer ones are cut between sentences.

Notes with a paragraph or line of 101–180 words are queued once to be chunked and embedded again,
the way 0007 did it. PDFs were all queued by 0010 just before, and their jobs run with this chunker.
"""

import importlib
import re

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

queue_notes = importlib.import_module("ingestion.migrations.0007_rechunk_notes_typed_line_by_line").queue_notes

BEFORE, NOW = 180, 100  # ingestion.chunking.PARAGRAPH_MAX_WORDS before and after


def _changes(text: str) -> bool:
    units = [unit for paragraph in re.split(r"\n\s*\n", text) for unit in [paragraph, *paragraph.split("\n")]]
    return any(NOW < len(unit.split()) <= BEFORE for unit in units)


def queue_rechunking(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    queue_notes(apps, _changes)


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0010_reread_pdfs_outer_page_numbers")]

    operations = [migrations.RunPython(queue_rechunking, migrations.RunPython.noop, elidable=True)]
