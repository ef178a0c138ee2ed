from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("enrichment", "0013_retention_redaction"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="trace_id",
            field=models.CharField(
                blank=True,
                default="",
                db_default="",
                help_text="OpenTelemetry trace id of the run (empty when tracing is off).",
                max_length=32,
            ),
        ),
    ]
