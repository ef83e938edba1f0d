"""`Job.owner` always equals its source's owner, as 0012 does it for chunks (issue 21).

A job's owner decides who lists it, cancels it and receives its progress (with the source's title)
on the jobs socket. A source reassigned by an admin left its jobs with the former owner, who could
still see them, cancel a running one and follow its progress. The same two triggers as 0012's.
"""

from django.db import migrations

FORWARD = """
UPDATE ingestion_job j SET owner_id = s.owner_id
FROM ingestion_source s
WHERE j.source_id = s.id AND j.owner_id <> s.owner_id;

CREATE FUNCTION job_owner_from_source() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT s.owner_id INTO NEW.owner_id FROM ingestion_source s WHERE s.id = NEW.source_id;
    RETURN NEW;
END
$$;

CREATE TRIGGER job_owner_from_source
BEFORE INSERT OR UPDATE OF source_id, owner_id ON ingestion_job
FOR EACH ROW EXECUTE FUNCTION job_owner_from_source();

CREATE FUNCTION source_owner_to_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE ingestion_job SET owner_id = NEW.owner_id WHERE source_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER source_owner_to_jobs
AFTER UPDATE OF owner_id ON ingestion_source
FOR EACH ROW WHEN (OLD.owner_id IS DISTINCT FROM NEW.owner_id)
EXECUTE FUNCTION source_owner_to_jobs();
"""

BACKWARD = """
DROP TRIGGER source_owner_to_jobs ON ingestion_source;
DROP FUNCTION source_owner_to_jobs();
DROP TRIGGER job_owner_from_source ON ingestion_job;
DROP FUNCTION job_owner_from_source();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("ingestion", "0012_chunk_owner_follows_source"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
