"""Assistant replies as stored rich output: messages, their canvas blocks, canvas documents."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class AssistantMessage(models.Model):
    """An assistant reply as written (``raw_text``) and as rendered for delivery."""

    session_key = models.CharField(max_length=300, blank=True, db_index=True)
    current_message_id = models.CharField(max_length=256, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    raw_text = models.TextField()
    text = models.TextField(blank=True, help_text="Visible text after the directives are removed.")
    reply_to_id = models.CharField(max_length=256, blank=True)
    reply_to_current = models.BooleanField(default=False)
    audio_as_voice = models.BooleanField(default=False)
    media_urls = models.JSONField(default=list, blank=True)
    # Who stored it (the API caller, or the token the gateway plugin sends): only they and
    # staff read it. NULL = stored by a command, or before owners were kept: staff only.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assistant_messages",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["-created_at", "-id"], name="assistantmsg_newest"),
            models.Index(fields=["owner", "-created_at", "-id"], name="assistantmsg_owner_newest"),
        ]

    def __str__(self) -> str:
        return f"Message {self.pk} ({self.created_at:%Y-%m-%d %H:%M})"

    def rendered_dict(self) -> dict[str, object]:
        """The ``POST /api/render`` shape; blocks come from ``blocks`` (prefetch them)."""
        return {
            "text": self.text,
            "replyToId": self.reply_to_id or None,
            "replyToCurrent": self.reply_to_current,
            "audioAsVoice": self.audio_as_voice,
            "mediaUrls": list(self.media_urls),
            "blocks": [row.block for row in self.blocks.all()],
        }


class CanvasBlock(models.Model):
    """One canvas block of a message, stored exactly as the renderer produced it."""

    message = models.ForeignKey(AssistantMessage, on_delete=models.CASCADE, related_name="blocks")
    position = models.PositiveIntegerField()
    block = models.JSONField()

    class Meta:
        ordering = ["message", "position"]
        constraints = [
            models.UniqueConstraint(fields=["message", "position"], name="canvasblock_position")
        ]

    def __str__(self) -> str:
        return f"Block {self.position} of message {self.message_id}"


class CanvasDocument(models.Model):
    """An HTML document served (sandboxed) at ``/__openclaw__/canvas/documents/<view_id>/``."""

    view_id = models.CharField(max_length=128, unique=True)
    title = models.CharField(max_length=200, blank=True)
    html = models.TextField()
    # Only the author (or staff) may read or replace a document: a viewId is guessable, and
    # the document is served on this origin's canvas path. NULL = stored by a command: staff.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="canvas_documents",
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title or self.view_id
