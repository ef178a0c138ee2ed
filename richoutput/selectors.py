"""Reads of the rich-output area: message pages, one message, canvas documents, iframes."""

from __future__ import annotations

from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Model, Prefetch, QuerySet

from common.keyset import DEFAULT_PAGE_SIZE, KeysetPage, keyset_page
from richoutput.canvas.iframe import SANDBOX_BY_MODE, IframeAttrs, canvas_iframe_attrs
from richoutput.models import AssistantMessage, CanvasBlock, CanvasDocument

Owned = TypeVar("Owned", bound=Model)


def readable_by(rows: QuerySet[Owned], reader: Any) -> QuerySet[Owned]:
    """The rows ``reader`` may read: their own, or all of them for staff. Rows without an
    owner (stored by a command, or before owners were kept) are staff-only; an anonymous
    reader gets none. Someone else's row is then simply not found (a 404, never a 403)."""
    if reader is None or not getattr(reader, "is_authenticated", False):
        return rows.none()
    if reader.is_staff:
        return rows
    return rows.filter(owner_id=reader.pk)


def _with_blocks(messages: QuerySet[AssistantMessage]) -> QuerySet[AssistantMessage]:
    ordered = CanvasBlock.objects.order_by("position")
    return messages.prefetch_related(Prefetch("blocks", queryset=ordered))


def message_list(
    *,
    reader: Any,
    session_key: str = "",
    cursor: str | None = None,
    limit: int = DEFAULT_PAGE_SIZE,
) -> KeysetPage[AssistantMessage]:
    """One page of the messages ``reader`` may read, newest first, blocks prefetched."""
    messages = readable_by(AssistantMessage.objects.all(), reader).order_by("-created_at", "-id")
    if session_key:
        messages = messages.filter(session_key=session_key)
    return keyset_page(_with_blocks(messages), cursor=cursor, limit=limit)


def message_find(*, message_id: int, reader: Any) -> AssistantMessage | None:
    """A message ``reader`` may read, with its blocks in position order, or None."""
    messages = readable_by(AssistantMessage.objects.filter(pk=message_id), reader)
    return _with_blocks(messages).first()


def canvas_document_find(*, view_id: str, reader: Any) -> CanvasDocument | None:
    """The document with this viewId if ``reader`` may read it, else None."""
    return readable_by(CanvasDocument.objects.filter(view_id=view_id), reader).first()


def canvas_sandbox_mode() -> str:
    mode = getattr(settings, "CANVAS_SANDBOX_MODE", "default")
    if mode not in SANDBOX_BY_MODE:
        choices = ", ".join(sorted(SANDBOX_BY_MODE))
        raise ImproperlyConfigured(f"CANVAS_SANDBOX_MODE must be one of {choices}; got {mode!r}")
    return str(mode)


def canvas_iframe(block: dict[str, object]) -> IframeAttrs:
    """How the dashboard frames ``block`` under this deployment's embed settings."""
    return canvas_iframe_attrs(
        block,
        allow_external=bool(getattr(settings, "CANVAS_ALLOW_EXTERNAL_EMBED_URLS", False)),
        sandbox_mode=canvas_sandbox_mode(),
    )


def canvas_iframes(blocks: list[dict[str, object]]) -> list[dict[str, object]]:
    """The iframe attributes for each block, in block order (the ``iframes`` API field)."""
    return [
        {
            "src": attrs.src,
            "sandbox": attrs.sandbox,
            "height": attrs.height,
            "title": attrs.title,
            "refused": attrs.refused,
        }
        for attrs in map(canvas_iframe, blocks)
    ]
