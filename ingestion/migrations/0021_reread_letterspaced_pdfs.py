"""PDF lines set with letterspacing no longer split words where kerning adds to the tracking
(ingestion/extract/pdf.py, `without_letterspacing`; issue 19): "to p erform HPO", "the mo del" were
passages that neither a search for "perform" nor for "model" found.

Which PDFs have such lines is known only by reading them again, so every ready PDF is queued once to
be read, chunked and embedded again, the way 0008 and 0020 did it.
"""

import importlib

from django.db import migrations

queue_rereading = importlib.import_module(
    "ingestion.migrations.0008_reread_pdfs_without_page_furniture"
).queue_rereading


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0020_rechunk_without_whole_seams")]

    operations = [migrations.RunPython(queue_rereading, migrations.RunPython.noop, elidable=True)]
