"""The preview's "Insert example" embeds a canvas that exists; the stored notice goes stale."""

from __future__ import annotations

import pytest

from tests.browser import chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_insert_example_shows_a_real_canvas_and_the_stored_notice_goes_stale(live) -> None:
    cookies = live.login_cookies()
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        context.add_cookies(
            [{"name": k, "value": v, "url": live.base_url} for k, v in cookies.items()]
        )
        page = context.new_page()
        failed: list[str] = []
        page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
        page.goto(live.base_url + "/render/")
        page.click("#preview-example")
        frame_element = page.wait_for_selector("#preview-output iframe", timeout=10_000)
        frame = frame_element.content_frame()
        frame.wait_for_selector("h1")
        assert frame.inner_text("h1") == "Service status"
        assert not failed, failed

        page.click("#preview-store")
        page.wait_for_selector("#preview-stored >> text=Stored as message #")
        page.locator("#preview-text").press("End")
        page.keyboard.type(" more")
        page.wait_for_selector("#preview-stored >> text=Edited since it was stored")
        assert "Stored as message" not in page.inner_text("#preview-stored")
        context.close()
