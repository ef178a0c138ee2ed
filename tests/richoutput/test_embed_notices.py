"""Every [embed] either frames a canvas or says why it does not (issue 33, item 6): an
inline HTML embed is refused with a reason, a refused URL is a compact notice, never a blank
frame."""

from __future__ import annotations

import pytest
from django.test import Client

from richoutput import services as canvas_services
from richoutput.canvas.iframe import iframe_refusal
from tests.richoutput.test_canvas_api import post

pytestmark = pytest.mark.django_db

HTML_EMBED = 'Look: [embed content_type="html" title="Mini"]<h1>Hi</h1>[/embed]'


def test_an_inline_html_embed_is_refused_with_a_reason(user_client: Client) -> None:
    body = post(user_client, "/api/render", {"text": HTML_EMBED}).json()
    assert body["blocks"] == [] and body["iframes"] == []
    (notice,) = body["embedNotices"]
    assert notice["reason"].startswith("Inline HTML embeds are not rendered")
    assert 'ref="…"' in notice["reason"]
    assert notice["source"].startswith('[embed content_type="html"')
    # The shortcode stays in the text, as the reference keeps it.
    assert "[embed content_type" in body["text"]
    stored = post(user_client, "/api/render", {"text": HTML_EMBED, "store": True}).json()
    assert stored["embedNotices"] == body["embedNotices"]


def test_a_refused_url_says_why_instead_of_a_blank_frame(user_client: Client) -> None:
    body = post(user_client, "/api/render", {"text": '[embed url="https://evil.example/x" /]'})
    (frame,) = body.json()["iframes"]
    assert frame["src"] is None
    assert frame["refused"].startswith("external embed URLs are not allowed in the dashboard")


@pytest.mark.parametrize(
    ("url", "allow", "expected"),
    [
        ("/__openclaw__/canvas/documents/a/index.html", False, None),
        ("https://ok.example/", True, None),
        ("https://ok.example/", False, "external embed URLs are not allowed"),
        (
            "/admin/",
            False,
            "only canvas documents (/__openclaw__/canvas/…) are framed, not /admin/",
        ),
        ("javascript:alert(1)", True, "only http(s) and canvas URLs are framed, not javascript:"),
        ("", False, "the embed has no URL"),
        (None, False, "the embed has no URL"),
    ],
    ids=["canvas", "external-allowed", "external", "other-path", "script", "blank", "missing"],
)
def test_iframe_refusal_names_the_rule(url, allow, expected) -> None:
    refusal = iframe_refusal(url, allow_external=allow)
    assert refusal == expected if expected is None else refusal.startswith(expected)


def test_message_page_shows_a_compact_notice_not_an_empty_frame(user_client: Client, user) -> None:
    message = canvas_services.message_store(
        text='[embed url="https://evil.example/x" title="Outside" /]', author=user
    )
    html = user_client.get(f"/messages/{message.pk}/").content.decode()
    figure = html.split('<figure class="canvas-card embed-refused"', 1)[1].split("</figure>", 1)[0]
    assert "<iframe" not in figure
    assert "Not shown: external embed URLs are not allowed in the dashboard" in figure
