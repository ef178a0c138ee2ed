"""Dashboard pages of the rich-output area, and the sandboxed canvas document view."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from common.errors import InvalidInput
from richoutput import selectors as canvas_selectors
from richoutput.services import VIEW_ID_PATTERN

MESSAGES_PAGE_SIZE = 25

# Nothing inside a canvas document may reach the network: it can only run its own inline
# script and style and show data: images. The CSP sandbox keeps the document in an opaque
# origin even when opened directly (not framed), so its script never acts as the dashboard.
DOCUMENT_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; font-src data:; media-src data:; connect-src 'none'; "
    "frame-ancestors 'self'; base-uri 'none'; form-action 'none'"
)
DOCUMENT_SANDBOX = {
    "default": "sandbox allow-scripts",
    "scripts": "sandbox allow-scripts",
    "strict": "sandbox",
    # Trusted mode deliberately lets documents share the dashboard origin.
    "trusted": "",
}


@require_GET
def render_preview(request: HttpRequest) -> HttpResponse:
    return render(request, "canvas/preview.html", {})


@require_GET
def message_list(request: HttpRequest) -> HttpResponse:
    cursor = request.GET.get("cursor") or None
    session_key = request.GET.get("sessionKey", "").strip()
    try:
        page = canvas_selectors.message_list(
            reader=request.user, session_key=session_key, cursor=cursor, limit=MESSAGES_PAGE_SIZE
        )
    except InvalidInput:
        raise Http404("Unknown page cursor.") from None
    context = {
        "page": page,
        "session_key": session_key,
        "is_first_page": cursor is None,
    }
    return render(request, "canvas/message_list.html", context)


@require_GET
def message_detail(request: HttpRequest, message_id: int) -> HttpResponse:
    message = canvas_selectors.message_find(message_id=message_id, reader=request.user)
    if message is None:
        raise Http404("No such message.")
    blocks = [row.block for row in message.blocks.all()]
    context = {"message": message, "iframes": [canvas_selectors.canvas_iframe(b) for b in blocks]}
    return render(request, "canvas/message_detail.html", context)


@require_GET
def canvas_document(request: HttpRequest, view_id: str) -> HttpResponse:
    """The stored HTML, served under a policy that keeps it inside its frame."""
    if not VIEW_ID_PATTERN.fullmatch(view_id):
        raise Http404("No such canvas document.")
    document = canvas_selectors.canvas_document_find(view_id=view_id, reader=request.user)
    if document is None:
        raise Http404("No such canvas document.")
    response = HttpResponse(document.html, content_type="text/html; charset=utf-8")
    sandbox = DOCUMENT_SANDBOX[canvas_selectors.canvas_sandbox_mode()]
    policy = f"{DOCUMENT_POLICY}; {sandbox}" if sandbox else DOCUMENT_POLICY
    response["Content-Security-Policy"] = policy
    response["X-Frame-Options"] = "SAMEORIGIN"
    response["X-Content-Type-Options"] = "nosniff"
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "private, no-cache"
    return response
