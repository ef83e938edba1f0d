"""A sentence that was a passage on its own is no longer repeated as the next passage's seam
(ingestion/chunking.py, issue 19): the next passage held it whole, so a search could return the same
words twice, wasting a result and a place in the model's prompt (seen on a PDF page, 2026-12-02).

Only text cut between sentences can change: a note with a paragraph over 100 words, and PDFs. They are
queued once to be chunked and embedded again, the way 0007, 0008 and 0017 did it.
"""

import importlib
import re

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

queue_notes = importlib.import_module("ingestion.migrations.0007_rechunk_notes_typed_line_by_line").queue_notes
queue_pdfs = importlib.import_module("ingestion.migrations.0008_reread_pdfs_without_page_furniture").queue_rereading

PARAGRAPH_MAX_WORDS = 100  # ingestion.chunking.PARAGRAPH_MAX_WORDS when this was written
LINE_ENDS = (".", "!", "?", ":", ";", ")", "。", "！", "？")
WRAP_MARGIN = 0.25


def _cut_between_sentences(text: str) -> bool:
    """Whether a paragraph over 100 words is cut between sentences: one of its units (a line as typed,
    or lines wrapped at a width joined again, as `chunking.line_units` reads them) is that long."""
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in paragraph.split("\n") if line.strip()]
        if len(paragraph.split()) <= PARAGRAPH_MAX_WORDS:
            continue
        width = max(len(line) for line in lines)
        wrapped = (
            len(lines) >= 3
            and sum(len(line) >= width * (1 - WRAP_MARGIN) for line in lines[:-1]) > (len(lines) - 1) / 2
        )
        units: list[str] = []
        for line in lines:
            if wrapped and units and line[:1].islower() and not units[-1].endswith(LINE_ENDS):
                units[-1] += " " + line
            else:
                units.append(line)
        if any(len(unit.split()) > PARAGRAPH_MAX_WORDS for unit in units):
            return True
    return False


def queue_rechunking(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    queue_notes(apps, _cut_between_sentences)
    queue_pdfs(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0019_chunk_mentions")]

    operations = [migrations.RunPython(queue_rechunking, migrations.RunPython.noop, elidable=True)]
