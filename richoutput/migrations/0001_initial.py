# Messages, canvas blocks and canvas documents, moved here from the controlui app (see
# common/migrations.py): a database created by an earlier release keeps its rows.

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

from common.migrations import CreateModelMovedFrom, content_types_moved

OLD_APP_LAST = ("controlui", "0003_h17c_canvas_document_owner")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        CreateModelMovedFrom(
            name="CanvasDocument",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("view_id", models.CharField(max_length=128, unique=True)),
                ("title", models.CharField(blank=True, max_length=200)),
                ("html", models.TextField()),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
                (
                    "updated_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
                (
                    "owner",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="canvas_documents",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
            },
            old_table="controlui_canvasdocument",
            requires=OLD_APP_LAST,
        ),
        CreateModelMovedFrom(
            name="AssistantMessage",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("session_key", models.CharField(blank=True, db_index=True, max_length=300)),
                ("current_message_id", models.CharField(blank=True, max_length=256)),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
                ("raw_text", models.TextField()),
                (
                    "text",
                    models.TextField(
                        blank=True, help_text="Visible text after the directives are removed."
                    ),
                ),
                ("reply_to_id", models.CharField(blank=True, max_length=256)),
                ("reply_to_current", models.BooleanField(default=False)),
                ("audio_as_voice", models.BooleanField(default=False)),
                ("media_urls", models.JSONField(blank=True, default=list)),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [
                    models.Index(fields=["-created_at", "-id"], name="assistantmsg_newest")
                ],
            },
            old_table="controlui_assistantmessage",
            requires=OLD_APP_LAST,
        ),
        CreateModelMovedFrom(
            name="CanvasBlock",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("position", models.PositiveIntegerField()),
                ("block", models.JSONField()),
                (
                    "message",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="blocks",
                        to="richoutput.assistantmessage",
                    ),
                ),
            ],
            options={
                "ordering": ["message", "position"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("message", "position"), name="canvasblock_position"
                    )
                ],
            },
            old_table="controlui_canvasblock",
            requires=OLD_APP_LAST,
        ),
        content_types_moved(
            "controlui", "richoutput", ["assistantmessage", "canvasblock", "canvasdocument"]
        ),
    ]
