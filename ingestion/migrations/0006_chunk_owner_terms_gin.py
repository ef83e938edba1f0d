import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.db.models.expressions
from django.db import migrations, models

# A passage's lexemes prefixed by its owner's id ("42 budget"). A GIN index over it holds postings per
# owner and lexeme: a search reads its owner's postings instead of every user's (bench/scale.py: at 1M
# chunks of 100 users the GIN scans were the slowest part of a hybrid search). btree_gin's composite
# (owner_id, search) index would do the same, but pgserver's PostgreSQL does not ship it.
CREATE_FUNCTION = """
CREATE FUNCTION chunk_owner_terms(owner bigint, document tsvector) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ARRAY(SELECT owner::text || ' ' || lexeme FROM unnest(tsvector_to_array(document)) AS lexeme)
"""


class Migration(migrations.Migration):
    dependencies = [
        ("ingestion", "0005_rechunk_notes_and_pdfs_60_words"),
    ]

    operations = [
        migrations.RunSQL(CREATE_FUNCTION, "DROP FUNCTION chunk_owner_terms(bigint, tsvector)"),
        migrations.AddIndex(
            model_name="chunk",
            index=django.contrib.postgres.indexes.GinIndex(
                django.db.models.expressions.Func(
                    models.F("owner"),
                    models.F("search"),
                    function="chunk_owner_terms",
                    output_field=django.contrib.postgres.fields.ArrayField(base_field=models.TextField(), size=None),
                ),
                name="chunk_owner_terms_gin",
            ),
        ),
        migrations.RemoveIndex(model_name="chunk", name="chunk_search_gin"),
    ]
