"""Row-level security on everything a person owns (issue 21; `secondbrain/rls.py` tells how it is used).

The role `secondbrain_app` (no log-in, no BYPASSRLS, owner of nothing) may read and write every
table, but of sources, passages, jobs, conversations, messages and citations only the rows of the
owner named by the session setting `secondbrain.owner`. The app takes that role for each unit of
work done for a person; migrations, the admin and the sweeper keep the login role, the tables'
owner, which the policies do not bind (no FORCE ROW LEVEL SECURITY).

The passage search looks its terms up with `@>` in a GIN index. Under a policy PostgreSQL uses an
index only for conditions built of leakproof functions, and `@>` (arraycontains) and our own
`chunk_owner_terms` are not marked so: every search would read all of its owner's passages. Both are
marked leakproof here — neither can fail or reveal anything for any text array — which takes a
superuser, as the embedded and the compose databases' are; a database owner without it gets a
warning and the slower plan, never a wrong answer.
"""

from django.db import migrations

APP_ROLE = "secondbrain_app"  # secondbrain.rls.APP_ROLE, spelt out: a migration must not change with the code

OWNED = "owner_id = secondbrain_owner()"
POLICIES = {
    "ingestion_source": OWNED,
    "ingestion_chunk": OWNED,
    "ingestion_job": OWNED,
    "chat_conversation": OWNED,
    "chat_message": "EXISTS (SELECT 1 FROM chat_conversation c WHERE c.id = conversation_id AND c.owner_id = "
    "secondbrain_owner())",
    "chat_citation": "EXISTS (SELECT 1 FROM chat_message m JOIN chat_conversation c ON c.id = m.conversation_id "
    "WHERE m.id = message_id AND c.owner_id = secondbrain_owner())",
}

ROLE = f"""
DO $$
BEGIN
    -- Roles belong to the server, not the database: another database's migration (a parallel test
    -- run's) may create the role or grant it between our check and our statement.
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
        BEGIN
            CREATE ROLE {APP_ROLE} NOLOGIN NOBYPASSRLS;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
    IF NOT pg_has_role(current_user, '{APP_ROLE}', 'MEMBER') THEN
        -- Who is not a superuser may take the role only as its member.
        BEGIN
            EXECUTE format('GRANT {APP_ROLE} TO %I', current_user);
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
END
$$;
GRANT USAGE ON SCHEMA public TO {APP_ROLE};
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {APP_ROLE};
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {APP_ROLE};
-- Tables and sequences later migrations create (by this same login role).
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {APP_ROLE};
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO {APP_ROLE};

CREATE FUNCTION secondbrain_owner() RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('secondbrain.owner', true), '')::bigint $$;

DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        ALTER FUNCTION pg_catalog.arraycontains(anyarray, anyarray) LEAKPROOF;
        ALTER FUNCTION chunk_owner_terms(bigint, tsvector) LEAKPROOF;
    ELSE
        RAISE WARNING 'not a superuser: searches under row-level security will not use the passage terms index';
    END IF;
END
$$;
"""

ROLE_BACKWARD = f"""
DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        ALTER FUNCTION pg_catalog.arraycontains(anyarray, anyarray) NOT LEAKPROOF;
        ALTER FUNCTION chunk_owner_terms(bigint, tsvector) NOT LEAKPROOF;
    END IF;
END
$$;
DROP FUNCTION secondbrain_owner();
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON TABLES FROM {APP_ROLE};
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON SEQUENCES FROM {APP_ROLE};
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {APP_ROLE};
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {APP_ROLE};
REVOKE USAGE ON SCHEMA public FROM {APP_ROLE};
"""


def policy(table: str, condition: str) -> migrations.RunSQL:
    return migrations.RunSQL(
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;"
        f"CREATE POLICY owner_rows ON {table} TO {APP_ROLE} USING ({condition});",
        f"DROP POLICY owner_rows ON {table}; ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("chat", "0003_message_route"),
        ("ingestion", "0013_job_owner_follows_source"),
    ]

    operations = [
        migrations.RunSQL(ROLE, ROLE_BACKWARD),
        *(policy(table, condition) for table, condition in POLICIES.items()),
    ]
