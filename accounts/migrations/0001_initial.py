# The API token model, moved here from the controlui app (see common/migrations.py): a
# database created by an earlier release keeps its tokens.

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

from common.migrations import CreateModelMovedFrom, content_types_moved


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        CreateModelMovedFrom(
            name="ApiToken",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(blank=True, max_length=100)),
                ("digest", models.CharField(editable=False, max_length=64, unique=True)),
                (
                    "hint",
                    models.CharField(
                        editable=False,
                        help_text="First characters, to tell tokens apart.",
                        max_length=12,
                    ),
                ),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
                ("last_used_at", models.DateTimeField(blank=True, editable=False, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="api_tokens",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "API token",
                "ordering": ["-created_at"],
            },
            old_table="controlui_apitoken",
            requires=("controlui", "0001_initial"),
        ),
        content_types_moved("controlui", "accounts", ["apitoken"]),
    ]
