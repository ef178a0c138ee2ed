"""The dashboard works under its Content-Security-Policy in a real browser (Debian chromium).

Each page is opened logged in; chromium reports every refused script, style or connection
on the console ("Refused to … because it violates the following Content Security Policy
directive"). None may appear, and the overview's live feed still connects over WebSocket.
"""

from __future__ import annotations

import pytest

from tests.browser import chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = [
    "/",
    "/decisions/",
    "/explain/",
    "/tools/",
    "/render/",
    "/messages/",
    "/admin/",
    "/api/docs",
]


def test_no_page_violates_the_policy(live) -> None:
    cookies = live.login_cookies()
    violations: list[str] = []
    with chromium() as browser:
        context = browser.new_context()
        context.add_cookies(
            [{"name": n, "value": v, "url": live.base_url} for n, v in cookies.items()]
        )
        page = context.new_page()
        page.on(
            "console",
            lambda message: (
                violations.append(f"{page.url}: {message.text}")
                if "Content Security Policy" in message.text
                else None
            ),
        )
        for path in PAGES:
            response = page.goto(live.base_url + path)
            assert response is not None and response.status == 200, path
            assert "script-src 'self'" in response.headers["content-security-policy"]
            page.wait_for_load_state("networkidle")
            if path == "/api/docs":  # Swagger UI runs from our static files, not a CDN
                page.wait_for_selector(".swagger-ui .info", timeout=10000)
        page.goto(live.base_url + "/")
        # The live feed's WebSocket is allowed by connect-src 'self'.
        page.wait_for_selector("[data-ws-path][data-state=open]", state="attached", timeout=5000)
    assert violations == []
