"""Writes of the rich-output area: stored assistant messages and canvas documents."""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from common.errors import InvalidInput, PayloadTooLarge, PermissionDenied
from richoutput.canvas.render import render_assistant_text
from richoutput.models import AssistantMessage, CanvasBlock, CanvasDocument

MAX_TEXT_CHARS = 1_048_576
MAX_HTML_BYTES = 2 * 1024 * 1024
VIEW_ID_PATTERN = re.compile(r"[A-Za-z0-9._-]{1,128}")
VIEW_ID_RULE = (
    "viewId must be 1-128 characters of A-Z, a-z, 0-9, '.', '_' or '-' (and not only dots)"
)


@transaction.atomic
def message_store(
    *,
    text: str,
    session_key: str = "",
    current_message_id: str | None = None,
    media_urls: Sequence[str] | None = None,
    author: Any = None,
) -> AssistantMessage:
    """Render ``text`` and store the message with its canvas blocks in one transaction.

    ``author`` is the user storing it (None for management commands): only they and staff
    read it back.

    The blocks are kept exactly as the renderer returned them, in shortcode order, so a
    stored message reads back identical to what ``POST /api/render`` answered.
    """
    rendered = render_assistant_text(text, current_message_id, media_urls)
    message = AssistantMessage.objects.create(
        session_key=session_key,
        current_message_id=current_message_id or "",
        raw_text=text,
        text=rendered.text,
        reply_to_id=rendered.reply_to_id or "",
        reply_to_current=rendered.reply_to_current,
        audio_as_voice=rendered.audio_as_voice,
        media_urls=list(rendered.media_urls),
        owner=author if getattr(author, "is_authenticated", False) else None,
    )
    CanvasBlock.objects.bulk_create(
        CanvasBlock(message=message, position=position, block=dict(block))
        for position, block in enumerate(rendered.blocks)
    )
    return message


def view_id_validate(view_id: str) -> str:
    """``viewId`` becomes a path segment: dot-only ids would climb out of the documents tree
    (``/documents/../index.html``), so they are refused with the rest."""
    if not VIEW_ID_PATTERN.fullmatch(view_id) or not view_id.strip("."):
        raise InvalidInput(f"{VIEW_ID_RULE}; got {view_id[:140]!r}.", ["viewId"])
    return view_id


def view_id_generate() -> str:
    return "cv_" + secrets.token_hex(8)


def document_replace_allowed(document: CanvasDocument, author: Any) -> None:
    if author is None or author.is_staff or document.owner_id == author.pk:
        return
    raise PermissionDenied(
        f"viewId {document.view_id!r} belongs to another user; only its author or staff "
        "may replace it (leave viewId out to get a new one)."
    )


@dataclass(frozen=True)
class StoredDocument:
    document: CanvasDocument
    created: bool


@transaction.atomic
def canvas_document_store(
    *, html: str, view_id: str | None = None, title: str = "", author: Any = None
) -> StoredDocument:
    """Create a canvas document, or replace the one with this ``view_id`` (an agent updates
    its canvas by writing the same id again). ``view_id`` is generated when absent.

    ``author`` is the user writing (None for management commands, which are trusted): a new
    document is theirs, and an existing one may be replaced only by its owner or by staff.
    """
    size = len(html.encode("utf-8", errors="surrogatepass"))
    if size > MAX_HTML_BYTES:
        raise PayloadTooLarge(f"html is {size} bytes; the limit is {MAX_HTML_BYTES} bytes (2 MiB).")
    view_id = view_id_validate(view_id) if view_id is not None else view_id_generate()
    document, created = CanvasDocument.objects.select_for_update().get_or_create(
        view_id=view_id,
        defaults={
            "title": title,
            "html": html,
            "owner": author if getattr(author, "is_authenticated", False) else None,
        },
    )
    if not created:
        document_replace_allowed(document, author)
        document.title = title
        document.html = html
        document.updated_at = timezone.now()
        document.save(update_fields=["title", "html", "updated_at"])
    return StoredDocument(document=document, created=created)
