"""Typed lines of alike lengths are no longer read as prose wrapped at a width (ingestion/chunking.py,
`line_units`; issue 19): three lines of a GP note ("rx naproxen …", "referral to physio - she
recommended Declan Moran …", "bloods for vit D …") were joined into one statement, so the search's
sentence ranker could not single out the referral line.

A join needed a line in lower case after one that does not end a sentence, in a paragraph of three
lines or more; notes with such lines are queued once to be chunked and embedded again, the way 0007
and 0020 did it (some are queued whose passages do not change: which do is known only by chunking them).
"""

import importlib
import re
from itertools import pairwise

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

queue_notes = importlib.import_module("ingestion.migrations.0007_rechunk_notes_typed_line_by_line").queue_notes

LINE_ENDS = (".", "!", "?", ":", ";", ")", "。", "！", "？")


def _could_have_joined(text: str) -> bool:
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in paragraph.split("\n") if line.strip()]
        if len(lines) >= 3 and any(
            line[:1].islower() and not before.endswith(LINE_ENDS) for before, line in pairwise(lines)
        ):
            return True
    return False


def queue_rechunking(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    queue_notes(apps, _could_have_joined)


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0021_reread_letterspaced_pdfs")]

    operations = [migrations.RunPython(queue_rechunking, migrations.RunPython.noop, elidable=True)]
