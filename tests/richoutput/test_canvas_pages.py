"""Rich output pages: preview, messages list/detail, and the sandboxed canvas documents."""

from __future__ import annotations

import pytest
from django.test import Client

from richoutput import services as canvas_services
from richoutput.models import CanvasDocument
from richoutput.views import MESSAGES_PAGE_SIZE

pytestmark = pytest.mark.django_db

HOSTILE = "<script>window.pwned=1</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))"
DOCUMENT_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; font-src data:; media-src data:; connect-src 'none'; "
    "frame-ancestors 'self'; base-uri 'none'; form-action 'none'"
)


@pytest.mark.parametrize(
    "path",
    ["/render/", "/messages/", "/messages/1/", "/__openclaw__/canvas/documents/cv_1/index.html"],
    ids=["preview", "messages", "message-detail", "canvas-document"],
)
def test_pages_redirect_anonymous_users_to_login(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


def test_navigation_links_to_both_pages(user_client: Client) -> None:
    html = user_client.get("/render/").content.decode()
    assert 'href="/render/"' in html and 'href="/messages/"' in html
    assert "Rich preview" in html and "Messages" in html


def test_preview_page_has_a_labelled_textarea_and_the_api_urls(user_client: Client) -> None:
    response = user_client.get("/render/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<label for="preview-text">' in html and 'id="preview-text"' in html
    assert 'data-render-url="/api/render"' in html and 'data-store-url="/api/messages"' in html
    assert "csrfmiddlewaretoken" in html
    assert "/static/js/preview.js" in html


def test_messages_empty_state_points_to_the_preview(user_client: Client) -> None:
    html = user_client.get("/messages/").content.decode()
    assert "No stored messages yet" in html
    assert 'href="/render/"' in html


def test_messages_list_shows_rows_escaped(staff_client: Client) -> None:
    hostile = canvas_services.message_store(text=HOSTILE, session_key="web:1")
    canvas_services.message_store(
        text='[[audio_as_voice]] hi [embed ref="a" /]', session_key="web:2"
    )
    html = staff_client.get("/messages/").content.decode()
    assert "<script>window.pwned" not in html and "<img src=x" not in html
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
    assert f'href="/messages/{hostile.pk}/"' in html
    assert "Voice note" in html
    assert "No stored messages yet" not in html


def test_messages_list_filters_by_session_key(staff_client: Client) -> None:
    canvas_services.message_store(text="alpha", session_key="web:1")
    canvas_services.message_store(text="beta", session_key="web:2")
    html = staff_client.get("/messages/", {"sessionKey": "web:2"}).content.decode()
    assert "beta" in html and "alpha" not in html
    empty = staff_client.get("/messages/", {"sessionKey": "nobody"}).content.decode()
    assert "No messages for this session key" in empty


def test_messages_list_pages_with_older_link(staff_client: Client) -> None:
    for index in range(MESSAGES_PAGE_SIZE + 3):
        canvas_services.message_store(text=f"note-{index:03d}")
    first = staff_client.get("/messages/")
    assert "note-027" in first.content.decode() and "note-002" not in first.content.decode()
    cursor = first.context["page"].next_cursor
    assert cursor and f"?cursor={cursor}" in first.content.decode()
    second = staff_client.get("/messages/", {"cursor": cursor}).content.decode()
    assert all(f"note-{index:03d}" in second for index in range(3))
    assert "note-003" not in second and "Older" not in second and "Newest" in second


def test_messages_list_bad_cursor_is_404(user_client: Client) -> None:
    assert user_client.get("/messages/", {"cursor": "%%%"}).status_code == 404


@pytest.mark.parametrize("count", [1, 30], ids=["one", "thirty"])
def test_messages_list_query_count_is_constant(
    staff_client: Client, django_assert_num_queries, count: int
) -> None:
    for index in range(count):
        canvas_services.message_store(text=f'm{index} [embed ref="v{index}" /]')
    # session, user, one page of messages, their blocks
    with django_assert_num_queries(4):
        assert staff_client.get("/messages/").status_code == 200


def test_message_detail_shows_badges_media_and_sandboxed_frames(staff_client: Client) -> None:
    text = (
        "[[reply_to:msg-77]] Report ready <b>bold?</b>\n"
        '[embed ref="cv_report" title="Report <v2>" height="500" /]\n'
        '[embed url="https://evil.example/x" /]\n'
        "[[audio_as_voice]]\n"
        "MEDIA:https://example.com/report.ogg"
    )
    message = canvas_services.message_store(text=text)
    html = staff_client.get(f"/messages/{message.pk}/").content.decode()
    assert "Reply to msg-77" in html and "Voice note" in html
    assert "Report ready &lt;b&gt;bold?&lt;/b&gt;" in html and "<b>bold?" not in html
    assert "<code>https://example.com/report.ogg</code>" in html
    assert (
        '<iframe class="canvas-frame" title="Report &lt;v2&gt;" sandbox="allow-scripts"\n'
        '              src="/__openclaw__/canvas/documents/cv_report/index.html"'
    ) in html
    assert 'data-height="500"' in html  # applied by static/js/frame-height.js (CSP)
    assert "evil.example" not in html.split("<details")[0]  # external src dropped by default
    assert "not allowed in the dashboard" in html


def test_message_detail_strict_mode_empties_the_sandbox(staff_client: Client, settings) -> None:
    settings.CANVAS_SANDBOX_MODE = "strict"
    message = canvas_services.message_store(text='[embed ref="a" /]')
    html = staff_client.get(f"/messages/{message.pk}/").content.decode()
    assert 'sandbox=""' in html and "allow-scripts" not in html


def test_message_detail_unknown_is_404(user_client: Client) -> None:
    assert user_client.get("/messages/424242/").status_code == 404


def test_message_detail_query_count_is_constant(
    staff_client: Client, django_assert_num_queries
) -> None:
    embeds = " ".join(f'[embed ref="v{index}" /]' for index in range(10))
    message = canvas_services.message_store(text=f"many {embeds}")
    # session, user, the message, its blocks
    with django_assert_num_queries(4):
        response = staff_client.get(f"/messages/{message.pk}/")
    assert response.content.decode().count("<iframe") == 10


# --- canvas documents ----------------------------------------------------------------------


def test_canvas_document_is_served_with_a_locked_down_policy(staff_client: Client) -> None:
    CanvasDocument.objects.create(view_id="cv_1", title="One", html="<h1>Hello canvas</h1>")
    response = staff_client.get("/__openclaw__/canvas/documents/cv_1/index.html")
    assert response.status_code == 200
    assert response.content == b"<h1>Hello canvas</h1>"
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert response["Content-Security-Policy"] == DOCUMENT_POLICY + "; sandbox allow-scripts"
    assert response["X-Frame-Options"] == "SAMEORIGIN"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "no-referrer"


@pytest.mark.parametrize(
    ("mode", "suffix"),
    [("strict", "; sandbox"), ("scripts", "; sandbox allow-scripts"), ("trusted", "")],
    ids=["strict", "scripts", "trusted"],
)
def test_canvas_document_sandbox_follows_the_mode(
    staff_client: Client, settings, mode: str, suffix: str
) -> None:
    settings.CANVAS_SANDBOX_MODE = mode
    CanvasDocument.objects.create(view_id="cv_1", html="x")
    response = staff_client.get("/__openclaw__/canvas/documents/cv_1/index.html")
    assert response["Content-Security-Policy"] == DOCUMENT_POLICY + suffix


@pytest.mark.parametrize(
    "path",
    [
        "/__openclaw__/canvas/documents/missing/index.html",
        "/__openclaw__/canvas/documents/..%2Fadmin/index.html",
        "/__openclaw__/canvas/documents/a%20b/index.html",
        "/__openclaw__/canvas/documents/cv_1/other.html",
    ],
    ids=["unknown", "encoded-traversal", "space", "other-file"],
)
def test_canvas_document_unknown_is_404(user_client: Client, path: str) -> None:
    CanvasDocument.objects.create(view_id="cv_1", html="x")
    assert user_client.get(path).status_code == 404


def test_canvas_document_round_trip_through_the_api(user_client: Client) -> None:
    created = user_client.post(
        "/api/canvas/documents",
        {"html": "<p>from the api</p>"},
        content_type="application/json",
    ).json()
    response = user_client.get(created["url"])
    assert response.status_code == 200 and response.content == b"<p>from the api</p>"


# --- admin ---------------------------------------------------------------------------------


def test_admin_shows_messages_with_read_only_blocks(staff_client: Client) -> None:
    message = canvas_services.message_store(text='hello [embed ref="cv_admin" /]')
    CanvasDocument.objects.create(view_id="cv_admin", html="<p>x</p>")
    assert staff_client.get("/admin/richoutput/assistantmessage/").status_code == 200
    change = staff_client.get(f"/admin/richoutput/assistantmessage/{message.pk}/change/")
    html = change.content.decode()
    assert change.status_code == 200
    assert "cv_admin" in html
    assert "blocks-0-block" not in html  # shown read-only, not as an editable field
    assert staff_client.get("/admin/richoutput/canvasdocument/").status_code == 200
