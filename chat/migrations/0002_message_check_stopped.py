from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("chat", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="message",
            name="citation_check",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AlterField(
            model_name="message",
            name="status",
            field=models.CharField(
                choices=[("complete", "Complete"), ("failed", "Failed"), ("stopped", "Stopped")],
                default="complete",
                max_length=16,
            ),
        ),
    ]
