"""A note's lines typed in lower case are now units of their own unless the paragraph looks wrapped at
a width (ingestion/chunking.py, issue 19): "wk2 run3 - Griffith park, 3.3km" after a line with no full
stop was glued to it as wrapped prose, and a long note typed that way became one line cut every 60 words.

Notes with a paragraph over 100 words where that happened, and whose lines do not end near one width,
are queued once to be chunked and embedded again, the way 0007 did it.
"""

import importlib
import re

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

queue_notes = importlib.import_module("ingestion.migrations.0007_rechunk_notes_typed_line_by_line").queue_notes

PARAGRAPH_MAX_WORDS = 100  # ingestion.chunking.PARAGRAPH_MAX_WORDS when this was written
LINE_ENDS = (".", "!", "?", ":", ";", ")", "。", "！", "？")
WRAP_MARGIN = 0.25


def _changes(text: str) -> bool:
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in paragraph.split("\n") if line.strip()]
        if len(paragraph.split()) <= PARAGRAPH_MAX_WORDS or len(lines) < 2:
            continue
        glued = any(
            after[:1].islower() and not before.endswith(LINE_ENDS)
            for before, after in zip(lines, lines[1:], strict=False)
        )
        width = max(len(line) for line in lines)
        full = sum(len(line) >= width * (1 - WRAP_MARGIN) for line in lines[:-1])
        if glued and not (len(lines) >= 3 and full > (len(lines) - 1) / 2):
            return True
    return False


def queue_rechunking(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    queue_notes(apps, _changes)


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0016_source_private")]

    operations = [migrations.RunPython(queue_rechunking, migrations.RunPython.noop, elidable=True)]
