"""A running head whose page number sits on the outer side of the page ("47902 Federal Register …" on
even pages, "Federal Register … 47903" on odd ones, as books and journals print it) is now page
furniture too (ingestion/extract/pdf.py, `_furniture_key`; issue 19).

Every ready PDF is queued once to be read again, exactly as 0008 did it.
"""

import importlib

from django.db import migrations

queue_rereading = importlib.import_module(
    "ingestion.migrations.0008_reread_pdfs_without_page_furniture"
).queue_rereading


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0009_rechunk_notes_long_typed_lines")]

    operations = [migrations.RunPython(queue_rereading, migrations.RunPython.noop, elidable=True)]
