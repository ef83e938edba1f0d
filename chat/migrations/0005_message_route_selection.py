from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0004_row_level_security"),
    ]

    operations = [
        migrations.AlterField(
            model_name="message",
            name="route",
            field=models.CharField(
                blank=True,
                choices=[
                    ("question", "Question"),
                    ("listing", "Listing by time"),
                    ("conversation", "Conversation"),
                    ("selection", "About a selection"),
                ],
                max_length=16,
            ),
        ),
    ]
