"""The rich output preview in a real browser (Debian chromium via Playwright) against daphne.

Sync Playwright on purpose: its sync API refuses to run inside an asyncio loop, and these
are plain (non-async) tests.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import chromium, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CANVAS_HTML = """<!doctype html>
<body style="background:#e6f4ea;font-family:sans-serif">
<h1 id="doc">Canvas document</h1>
<script>
  var heading = document.getElementById("doc");
  heading.dataset.ran = "yes";
  try { heading.dataset.parent = String(parent.document.title); }
  catch (error) { heading.dataset.parent = "isolated"; }
</script>
</body>"""
ASSISTANT_TEXT = "\n".join(
    [
        "[[reply_to:msg-123]] Quarterly report is **ready**, see `report.csv`.",
        "<script>window.__pwned = 1</script>",
        '<img src=x onerror="window.__pwned = 2">',
        "[click me](javascript:window.__pwned=3)",
        '[embed ref="cv_browser" title="Board <b>x</b>" height="480" /]',
        "[[audio_as_voice]]",
        "MEDIA:https://example.com/report.ogg",
    ]
)
DOCUMENT_SRC = "/__openclaw__/canvas/documents/cv_browser/index.html"


@pytest.fixture
def browser_page(live) -> Iterator[tuple[Any, list[str]]]:
    cookies = live.login_cookies()
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 1100})
        context.add_cookies(
            [
                {"name": name, "value": value, "url": live.base_url}
                for name, value in cookies.items()
            ]
        )
        response = context.request.post(
            live.base_url + "/api/canvas/documents",
            data=json.dumps({"viewId": "cv_browser", "title": "Board", "html": CANVAS_HTML}),
            headers={"Content-Type": "application/json", "X-CSRFToken": cookies["csrftoken"]},
        )
        assert response.status in (200, 201), response.text()
        page = context.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        yield page, dialogs


def test_preview_renders_a_rich_message_safely(live, browser_page) -> None:
    page, dialogs = browser_page
    page.goto(live.base_url + "/render/")
    page.fill("#preview-text", ASSISTANT_TEXT)
    page.wait_for_selector("#preview-output[data-state=rendered] iframe.canvas-frame")
    output = page.locator("#preview-output")

    # Reply and voice badges, the attachment list, the Markdown that is allowed.
    assert output.locator(".rich-badge-reply").inner_text() == "Reply to msg-123"
    assert output.locator(".rich-badge-voice").inner_text() == "Voice note"
    assert output.locator(".rich-media li").all_inner_texts() == ["https://example.com/report.ogg"]
    assert output.locator(".rich-text strong").inner_text() == "ready"
    assert output.locator(".rich-text code").inner_text() == "report.csv"

    # Hostile markup is visible as text and nothing ran.
    text = output.locator(".rich-text").inner_text()
    assert "<script>window.__pwned = 1</script>" in text
    assert '<img src=x onerror="window.__pwned = 2">' in text
    assert "[click me](javascript:window.__pwned=3)" in text
    assert output.locator("script, img, a[href^='javascript']").count() == 0
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []

    # The canvas block: same-origin src, scripts-only sandbox, height from the embed.
    frame = output.locator("iframe.canvas-frame")
    assert frame.count() == 1
    assert frame.get_attribute("src") == DOCUMENT_SRC
    assert frame.get_attribute("sandbox") == "allow-scripts"
    assert frame.get_attribute("title") == "Board <b>x</b>"
    assert output.locator(".canvas-card figcaption").inner_text() == "Board <b>x</b>"
    box = frame.bounding_box()
    assert box is not None and round(box["height"]) == 480 and box["width"] > 400

    # The stored document loads in the frame, runs its script, and cannot reach the page.
    heading = page.frame_locator("iframe.canvas-frame").locator("#doc")
    heading.wait_for()
    assert heading.inner_text() == "Canvas document"
    assert heading.get_attribute("data-ran") == "yes"
    assert heading.get_attribute("data-parent") == "isolated"

    assert save_screenshot(page, "preview.png").stat().st_size > 10_000


def test_store_then_open_the_stored_message(live, browser_page) -> None:
    page, dialogs = browser_page
    page.goto(live.base_url + "/render/")
    page.fill("#preview-text", ASSISTANT_TEXT)
    page.fill("#preview-session-key", "browser:test")
    page.wait_for_selector("#preview-output[data-state=rendered]")
    page.click("#preview-store")
    link = page.locator("#preview-stored a")
    link.wait_for()
    assert link.inner_text().startswith("View message #")
    link.click()
    page.wait_for_selector("iframe.canvas-frame")

    assert page.locator(".rich-badge-reply").inner_text() == "Reply to msg-123"
    assert page.locator(".rich-badge-voice").inner_text() == "Voice note"
    assert page.locator(".rich-text strong").inner_text() == "ready"
    assert "<script>window.__pwned = 1</script>" in page.locator(".rich-text").inner_text()
    assert page.locator(".rich-message script, .rich-message img").count() == 0
    frame = page.locator("iframe.canvas-frame")
    assert (frame.get_attribute("src"), frame.get_attribute("sandbox")) == (
        DOCUMENT_SRC,
        "allow-scripts",
    )
    # The server-rendered frame gets its height from static/js/frame-height.js (the CSP
    # allows no inline style attribute).
    box = frame.bounding_box()
    assert box is not None and round(box["height"]) == 480
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []


HOSTILE_MARKDOWN = [
    "<script>window.__pwned = 1</script>",
    "[a](javascript:window.__pwned=1)",
    "[a](JaVaScRiPt:window.__pwned=1)",
    "[a](data:text/html,<script>window.__pwned=1</script>)",
    "[a](vbscript:msgbox)",
    "**<img src=x onerror=window.__pwned=1>**",
    "```\n<script>window.__pwned = 1</script>\n```",
    "`<iframe src=javascript:window.__pwned=1>`",
    'https://example.com/"onmouseover="window.__pwned=1',
    "> <style>body{display:none}</style>\n- <object data=x></object>",
    "[**x**](https://example.com/ok)",
]
PROBE = """(inputs) => inputs.map((text) => {
  const box = document.createElement("div");
  box.appendChild(window.ControlUiRichText.renderMarkdown(text));
  return {
    dangerous: box.querySelectorAll("script, img, iframe, object, embed, style, svg").length,
    hrefs: Array.from(box.querySelectorAll("a"), (a) => a.href),
    attributes: Array.from(box.querySelectorAll("*"), (n) => n.getAttributeNames()).flat(),
    text: box.textContent,
  };
})"""


def test_markdown_renderer_never_creates_active_content(live, browser_page) -> None:
    page, dialogs = browser_page
    page.goto(live.base_url + "/render/")
    results = page.evaluate(PROBE, HOSTILE_MARKDOWN)
    for text, result in zip(HOSTILE_MARKDOWN, results, strict=True):
        assert result["dangerous"] == 0, text
        assert all(href.startswith(("http://", "https://")) for href in result["hrefs"]), text
        assert set(result["attributes"]) <= {"href", "rel", "target", "data-language"}, text
    assert results[1]["hrefs"] == [] and "[a](javascript:" in results[1]["text"]
    assert results[0]["text"] == HOSTILE_MARKDOWN[0]
    assert results[8]["hrefs"] == ["https://example.com/"]
    assert results[-1]["hrefs"] == ["https://example.com/ok"]
    page.wait_for_timeout(200)
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
