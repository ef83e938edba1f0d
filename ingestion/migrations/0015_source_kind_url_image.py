from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingestion", "0014_source_kind_calendar"),
    ]

    operations = [
        migrations.AlterField(
            model_name="source",
            name="kind",
            field=models.CharField(
                choices=[
                    ("note", "Note"),
                    ("pdf", "PDF"),
                    ("audio", "Audio"),
                    ("calendar", "Calendar"),
                    ("url", "Web page"),
                    ("image", "Image"),
                ],
                max_length=16,
            ),
        ),
    ]
