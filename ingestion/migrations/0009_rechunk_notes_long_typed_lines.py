"""A long line of a note typed line by line is now kept whole, like a paragraph (ingestion/chunking.py,
issue 19).

Since 0007 a note's paragraph over 180 words is cut between its lines; a line over 60 words was then
cut between sentences, where the same words typed with blank lines around them stayed one passage.
Only notes with such a line change; they are queued once to be chunked and embedded again, the way
0007 did it: queued jobs dated back past `JOB_STUCK_AFTER_SECONDS`, which the periodic sweeper sends to
the workers. Until its job runs a note keeps its old passages.
"""

import importlib
import re

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

queue_notes = importlib.import_module("ingestion.migrations.0007_rechunk_notes_typed_line_by_line").queue_notes

MAX_WORDS = 60  # ingestion.chunking.MAX_WORDS and PARAGRAPH_MAX_WORDS when this was written
PARAGRAPH_MAX_WORDS = 180


def _has_long_typed_line(text: str) -> bool:
    return any(
        "\n" in paragraph.strip()
        and len(paragraph.split()) > PARAGRAPH_MAX_WORDS
        and any(MAX_WORDS < len(line.split()) <= PARAGRAPH_MAX_WORDS for line in paragraph.split("\n"))
        for paragraph in re.split(r"\n\s*\n", text)
    )


def queue_rechunking(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    queue_notes(apps, _has_long_typed_line)


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0008_reread_pdfs_without_page_furniture")]

    operations = [migrations.RunPython(queue_rechunking, migrations.RunPython.noop, elidable=True)]
