from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingestion", "0015_source_kind_url_image"),
    ]

    operations = [
        migrations.AddField(
            model_name="source",
            name="private",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddIndex(
            model_name="source",
            index=models.Index(condition=models.Q(("private", True)), fields=["owner"], name="source_owner_private"),
        ),
    ]
