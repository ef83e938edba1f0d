"""The audit log is a person's own like their sources: the same policy (chat migration 0004)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_auditentry"),
        ("chat", "0004_row_level_security"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE accounts_auditentry ENABLE ROW LEVEL SECURITY;"
            "CREATE POLICY owner_rows ON accounts_auditentry TO secondbrain_app USING (user_id = secondbrain_owner());",
            "DROP POLICY owner_rows ON accounts_auditentry; ALTER TABLE accounts_auditentry DISABLE ROW LEVEL SECURITY;",
        )
    ]
