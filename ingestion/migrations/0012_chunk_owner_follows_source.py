"""`Chunk.owner` always equals its source's owner (issue 21): PostgreSQL keeps it so.

The column is denormalized from the source so that every search filters on an indexed column of the
chunk table. Nothing kept the two equal: an admin reassigning a source left its passages with the
former owner, who went on finding them in search and answers. PostgreSQL cannot compute a column
from another table, so two triggers do what a generated column would:

- before a chunk is inserted, or its `source_id` or `owner_id` updated, its owner is set to its
  source's owner, whatever the statement wrote (the source is the truth; this column is a copy);
- after a source's owner changes, its chunks follow in the same transaction.

Chunks that had drifted already are put right first.
"""

from django.db import migrations

FORWARD = """
UPDATE ingestion_chunk c SET owner_id = s.owner_id
FROM ingestion_source s
WHERE c.source_id = s.id AND c.owner_id <> s.owner_id;

CREATE FUNCTION chunk_owner_from_source() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT s.owner_id INTO NEW.owner_id FROM ingestion_source s WHERE s.id = NEW.source_id;
    RETURN NEW;
END
$$;

CREATE TRIGGER chunk_owner_from_source
BEFORE INSERT OR UPDATE OF source_id, owner_id ON ingestion_chunk
FOR EACH ROW EXECUTE FUNCTION chunk_owner_from_source();

CREATE FUNCTION source_owner_to_chunks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE ingestion_chunk SET owner_id = NEW.owner_id WHERE source_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER source_owner_to_chunks
AFTER UPDATE OF owner_id ON ingestion_source
FOR EACH ROW WHEN (OLD.owner_id IS DISTINCT FROM NEW.owner_id)
EXECUTE FUNCTION source_owner_to_chunks();
"""

BACKWARD = """
DROP TRIGGER source_owner_to_chunks ON ingestion_source;
DROP FUNCTION source_owner_to_chunks();
DROP TRIGGER chunk_owner_from_source ON ingestion_chunk;
DROP FUNCTION chunk_owner_from_source();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("ingestion", "0011_rechunk_paragraphs_over_100_words"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
