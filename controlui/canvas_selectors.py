"""Reads of the rich-output area: message pages, one message, canvas documents, iframes."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Prefetch, Q, QuerySet

from controlui.canvas.iframe import SANDBOX_BY_MODE, IframeAttrs, canvas_iframe_attrs
from controlui.errors import InvalidInput
from controlui.models import AssistantMessage, CanvasBlock, CanvasDocument

MAX_PAGE_SIZE = 200
DEFAULT_PAGE_SIZE = 50


def _with_blocks(messages: QuerySet[AssistantMessage]) -> QuerySet[AssistantMessage]:
    ordered = CanvasBlock.objects.order_by("position")
    return messages.prefetch_related(Prefetch("blocks", queryset=ordered))


def encode_cursor(message: AssistantMessage) -> str:
    raw = f"{message.created_at.isoformat()}|{message.pk}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        stamp, _, pk = raw.partition("|")
        return datetime.fromisoformat(stamp), int(pk)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidInput("cursor: not a cursor returned by this API", ["cursor"]) from None


@dataclass(frozen=True)
class MessagePage:
    items: list[AssistantMessage]
    next_cursor: str | None


def message_list(
    *, session_key: str = "", cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
) -> MessagePage:
    """One page of stored messages, newest first, blocks prefetched (two queries)."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidInput(f"limit: must be between 1 and {MAX_PAGE_SIZE}, got {limit}", ["limit"])
    messages = AssistantMessage.objects.order_by("-created_at", "-id")
    if session_key:
        messages = messages.filter(session_key=session_key)
    if cursor:
        created, pk = decode_cursor(cursor)
        messages = messages.filter(Q(created_at__lt=created) | Q(created_at=created, id__lt=pk))
    items = list(_with_blocks(messages)[: limit + 1])
    has_more = len(items) > limit
    items = items[:limit]
    return MessagePage(items=items, next_cursor=encode_cursor(items[-1]) if has_more else None)


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
        {"src": attrs.src, "sandbox": attrs.sandbox, "height": attrs.height, "title": attrs.title}
        for attrs in map(canvas_iframe, blocks)
    ]
