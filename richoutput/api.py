"""The rich-output router: render, neutralize, stored messages, canvas documents (SPEC §9)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from django.http import HttpRequest
from django.urls import reverse
from ninja import Router, Schema, Status
from pydantic import Field

from common.errors import NotFound
from richoutput import selectors as canvas_selectors
from richoutput import services as canvas_services
from richoutput.canvas.render import neutralize_media_directives, render_assistant_text
from richoutput.models import AssistantMessage
from richoutput.selectors import DEFAULT_PAGE_SIZE
from richoutput.services import MAX_TEXT_CHARS

MAX_MEDIA_URLS = 64
MAX_MEDIA_URL_CHARS = 4096
# Room for the JSON around it; the real cap (2 MiB of UTF-8) is checked by the service.
MAX_HTML_CHARS = 2 * 1024 * 1024

MediaUrl = Annotated[str, Field(max_length=MAX_MEDIA_URL_CHARS)]

router = Router(tags=["rich output"])


class RenderIn(Schema):
    text: str = Field(max_length=MAX_TEXT_CHARS)
    currentMessageId: str | None = Field(default=None, max_length=256)
    mediaUrls: list[MediaUrl] | None = Field(default=None, max_length=MAX_MEDIA_URLS)
    store: bool = False
    sessionKey: str | None = Field(default=None, max_length=300)


class IframeOut(Schema):
    src: str | None
    sandbox: str
    height: int
    title: str
    refused: str | None = Field(
        default=None, description="Why the block is not framed (no src); null when it is."
    )


class EmbedNoticeOut(Schema):
    source: str
    reason: str


class RenderedFields(Schema):
    """What rendering assistant text yields (``Rendered.to_dict()``)."""

    text: str
    replyToId: str | None
    replyToCurrent: bool
    audioAsVoice: bool
    mediaUrls: list[str]
    blocks: list[dict[str, Any]]


class RenderOut(RenderedFields):
    messageId: int | None
    iframes: list[IframeOut] = Field(
        description="How the dashboard frames each block (same order as blocks)."
    )
    embedNotices: list[EmbedNoticeOut] = Field(
        default_factory=list,
        description="[embed] shortcodes that gave no block (left in the text), with why.",
    )


class NeutralizeIn(Schema):
    text: str = Field(max_length=MAX_TEXT_CHARS)


class NeutralizeOut(Schema):
    text: str


class MessageIn(Schema):
    text: str = Field(max_length=MAX_TEXT_CHARS)
    sessionKey: str | None = Field(default=None, max_length=300)
    currentMessageId: str | None = Field(default=None, max_length=256)
    mediaUrls: list[MediaUrl] | None = Field(default=None, max_length=MAX_MEDIA_URLS)


class MessageRecord(RenderedFields):
    id: int
    url: str
    createdAt: datetime
    sessionKey: str
    currentMessageId: str | None
    rawText: str


class MessagePage(Schema):
    items: list[MessageRecord]
    nextCursor: str | None


class CanvasDocumentIn(Schema):
    viewId: str | None = Field(default=None, max_length=1000)
    title: str = Field(default="", max_length=200)
    html: str = Field(max_length=MAX_HTML_CHARS)


class CanvasDocumentOut(Schema):
    viewId: str
    url: str


def message_record(message: AssistantMessage) -> dict[str, Any]:
    return {
        "id": message.pk,
        "url": reverse("message-detail", args=[message.pk]),
        "createdAt": message.created_at,
        "sessionKey": message.session_key,
        "currentMessageId": message.current_message_id or None,
        "rawText": message.raw_text,
        **message.rendered_dict(),
    }


def _with_iframes(rendered: dict[str, Any], message_id: int | None) -> dict[str, Any]:
    return {
        **rendered,
        "messageId": message_id,
        "iframes": canvas_selectors.canvas_iframes(rendered["blocks"]),
    }


@router.post("/render", response=RenderOut)
def render(request: HttpRequest, payload: RenderIn) -> dict[str, Any]:
    """Assistant text -> visible text, reply/voice metadata, media and canvas blocks.
    With ``store: true`` the message is also stored and ``messageId`` is its id."""
    if payload.store:
        message = canvas_services.message_store(
            text=payload.text,
            session_key=payload.sessionKey or "",
            current_message_id=payload.currentMessageId,
            media_urls=payload.mediaUrls,
            author=request.user,
        )
        notices = render_assistant_text(payload.text, payload.currentMessageId).embed_notices()
        return {**_with_iframes(message.rendered_dict(), message.pk), "embedNotices": notices}
    rendered = render_assistant_text(payload.text, payload.currentMessageId, payload.mediaUrls)
    return {**_with_iframes(rendered.to_dict(), None), "embedNotices": rendered.embed_notices()}


@router.post("/render/neutralize", response=NeutralizeOut)
def render_neutralize(request: HttpRequest, payload: NeutralizeIn) -> dict[str, str]:
    """Defang line-start ``MEDIA:`` directives in untrusted text."""
    return {"text": neutralize_media_directives(payload.text)}


@router.get("/messages", response=MessagePage)
def messages(
    request: HttpRequest,
    sessionKey: str = "",
    cursor: str | None = None,
    limit: int = DEFAULT_PAGE_SIZE,
) -> dict[str, Any]:
    """Your stored messages (staff: everyone's), newest first; ``nextCursor`` fetches the next
    (older) page."""
    page = canvas_selectors.message_list(
        reader=request.user, session_key=sessionKey, cursor=cursor, limit=limit
    )
    return {"items": [message_record(item) for item in page.items], "nextCursor": page.next_cursor}


@router.post("/messages", response={201: MessageRecord})
def message_create(request: HttpRequest, payload: MessageIn) -> Status[dict[str, Any]]:
    """Render and store an assistant message with its canvas blocks."""
    message = canvas_services.message_store(
        text=payload.text,
        session_key=payload.sessionKey or "",
        current_message_id=payload.currentMessageId,
        media_urls=payload.mediaUrls,
        author=request.user,
    )
    return Status(201, message_record(message))


@router.get("/messages/{message_id}", response=MessageRecord)
def message_detail(request: HttpRequest, message_id: int) -> dict[str, Any]:
    """One stored message of yours (staff: anyone's); someone else's is a 404."""
    message = canvas_selectors.message_find(message_id=message_id, reader=request.user)
    if message is None:
        raise NotFound(f"No stored message with id {message_id}.")
    return message_record(message)


@router.post("/canvas/documents", response={200: CanvasDocumentOut, 201: CanvasDocumentOut})
def canvas_document_create(
    request: HttpRequest, payload: CanvasDocumentIn
) -> Status[dict[str, str]]:
    """Store an HTML document for canvas embeds (201), or replace the one with this viewId
    (200; only its author or staff, else 403). Embed it with ``[embed ref="<viewId>" /]``."""
    stored = canvas_services.canvas_document_store(
        html=payload.html, view_id=payload.viewId, title=payload.title, author=request.user
    )
    view_id = stored.document.view_id
    url = reverse("canvas-document", args=[view_id])
    return Status(201 if stored.created else 200, {"viewId": view_id, "url": url})
