"""Reads of the rich-output area: message pages, one message, canvas documents, iframes."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Prefetch, QuerySet

from common.keyset import DEFAULT_PAGE_SIZE, KeysetPage, keyset_page
from richoutput.canvas.iframe import SANDBOX_BY_MODE, IframeAttrs, canvas_iframe_attrs
from richoutput.models import AssistantMessage, CanvasBlock, CanvasDocument


def _with_blocks(messages: QuerySet[AssistantMessage]) -> QuerySet[AssistantMessage]:
    ordered = CanvasBlock.objects.order_by("position")
    return messages.prefetch_related(Prefetch("blocks", queryset=ordered))


def message_list(
    *, session_key: str = "", cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
) -> KeysetPage[AssistantMessage]:
    """One page of stored messages, newest first, blocks prefetched (two queries)."""
    messages = AssistantMessage.objects.order_by("-created_at", "-id")
    if session_key:
        messages = messages.filter(session_key=session_key)
    return keyset_page(_with_blocks(messages), cursor=cursor, limit=limit)


def message_find(*, message_id: int) -> AssistantMessage | None:
    """A message with its blocks in position order (two queries), or None."""
    return _with_blocks(AssistantMessage.objects.filter(pk=message_id)).first()


def canvas_document_find(*, view_id: str) -> CanvasDocument | None:
    return CanvasDocument.objects.filter(view_id=view_id).first()


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
