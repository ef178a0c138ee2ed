"""The enrichment dashboard in a real browser (Debian chromium via Playwright) against daphne.

One flow, in the order an operator would go: log in through the login form, run an
enrichment from the overview's form over ``/ws/enrich/`` and watch it arrive in the live feed
of another open overview, filter and page the history, open the run's attempt timeline,
explain a private URL. Screenshots land in ``artifacts/screenshots/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import chromium, save_screenshot, wait_until
from tests.enrichment.conftest import summarizer_config

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HISTORY_CHANNEL = "browser-history"
# 55 runs on one channel: more than one page of the default 50.
MAKE_HISTORY = f"""
from datetime import timedelta
from django.utils import timezone
from enrichment.models import Run
now = timezone.now()
Run.objects.bulk_create(
    Run(
        created_at=now - timedelta(minutes=90 + i),
        channel={HISTORY_CHANNEL!r},
        chat_type="group",
        session_key=f"agent:main:browser:{{i}}",
        original_body=f"history run {{i}}",
        outcome="no-links",
        duration_ms=3,
    )
    for i in range(55)
)
"""


def screenshot(page: Any, name: str) -> None:
    assert save_screenshot(page, name).stat().st_size > 10_000


@pytest.fixture
def browser_context(live) -> Iterator[Any]:
    with chromium() as browser:
        yield browser.new_context(viewport={"width": 1280, "height": 1000})


def log_in(page: Any, live: Any) -> None:
    page.goto(live.base_url + "/decisions/")
    assert "/login/" in page.url
    page.fill("#id_username", "live-admin")
    page.fill("#id_password", "live-admin-pass-123")
    page.press("#id_password", "Enter")
    page.wait_for_url(re.compile(r"/decisions/$"))


@pytest.fixture
def summarizer_stored(live, browser_context) -> Iterator[Any]:
    """Log in, then store the test-summarizer config through the staff API (restored after)."""
    page = browser_context.new_page()
    log_in(page, live)
    cookies = {c["name"]: c["value"] for c in browser_context.cookies()}
    headers = {"Content-Type": "application/json", "X-CSRFToken": cookies["csrftoken"]}
    api = browser_context.request
    previous = api.get(live.base_url + "/api/config")
    assert previous.ok, previous.text()
    stored = api.put(
        live.base_url + "/api/config", data=json.dumps(summarizer_config()), headers=headers
    )
    assert stored.ok, stored.text()
    yield page
    api.put(live.base_url + "/api/config", data=previous.text(), headers=headers)


def test_dashboard_flow(live, browser_context, summarizer_stored) -> None:
    page = summarizer_stored
    live.manage("shell", "-c", MAKE_HISTORY)

    # Another overview is open and listening before the run happens.
    watcher = browser_context.new_page()
    watcher.goto(live.base_url + "/")
    watcher.wait_for_selector("#live-status[data-state=open]")

    # Run an enrichment from the overview's form, over /ws/enrich/.
    page.goto(live.base_url + "/")
    page.wait_for_selector("#live-status[data-state=open]")
    # The /slow summary takes a second: long enough for the form to show its progress.
    page.fill("#enrich-body", "Please read http://127.0.0.1/browser-article/slow today")
    page.fill("#enrich-channel", "browser")
    page.fill("#enrich-session-key", "agent:main:browser:live")
    page.press("#enrich-body", "Enter")
    page.wait_for_selector("#enrich-result[data-state=done]", timeout=20_000)
    progress = page.locator("#enrich-progress li").all_inner_texts()
    assert any("Running" in line and "/browser-article" in line for line in progress), progress
    result = page.locator("#enrich-result")
    assert "Summary of http://127.0.0.1/browser-article" in result.locator("pre").inner_text()
    run_link = result.locator("a")
    run_id = int(run_link.inner_text().removeprefix("run #"))

    # It shows up in both live feeds without a reload.
    for viewer in (page, watcher):
        item = viewer.locator(f"#live-feed li[data-run-id='{run_id}']")
        item.wait_for(timeout=10_000)
        assert "success" in item.inner_text() and "browser" in item.inner_text()
    watcher.close()
    screenshot(page, "overview.png")

    # Filter the history from the form (Enter submits) and page through it.
    page.goto(live.base_url + "/decisions/")
    page.fill("#filter-channel", HISTORY_CHANNEL)
    page.press("#filter-channel", "Enter")
    page.wait_for_url(re.compile(r"channel=" + HISTORY_CHANNEL))
    rows = page.locator("table.history-table tbody tr")
    assert rows.count() == 50
    assert page.locator("#page-newer").count() == 0
    first_page_text = rows.first.inner_text()
    assert HISTORY_CHANNEL in first_page_text
    screenshot(page, "history.png")
    page.click("#page-older")
    page.wait_for_url(re.compile(r"cursor="))
    assert rows.count() == 5
    assert "channel=" + HISTORY_CHANNEL in page.url
    assert page.locator("#page-older").count() == 0
    page.click("#page-newer")
    page.wait_for_url(re.compile(r"^(?!.*cursor=).*channel=" + HISTORY_CHANNEL))
    assert rows.count() == 50 and rows.first.inner_text() == first_page_text

    # Open the enriched run and see its attempt timeline.
    page.goto(live.base_url + "/decisions/?channel=browser")
    page.click(f"a[href^='/decisions/{run_id}/']")
    page.wait_for_selector("ol.timeline li.outcome-success")
    attempt = page.locator("ol.timeline li.outcome-success").first
    assert "summarizer.py" in attempt.inner_text()
    assert "http://127.0.0.1/browser-article" in attempt.locator("code.argv").inner_text()
    assert (
        "Summary of http://127.0.0.1/browser-article"
        in page.locator("#body-enriched mark.diff-added").inner_text()
    )
    assert page.locator(".ssrf-verdict").first.inner_text() == "allowed"
    screenshot(page, "run-detail.png")

    # Explain a private URL: blocked, with the reason.
    page.bring_to_front()  # autofocus only applies in the focused tab (a second one is open)
    page.click("nav.mainnav >> text=Explain")
    page.wait_for_url(re.compile(r"/explain/$"))
    # The form is keyboard-first: the message field has focus without a click.
    wait_until(
        lambda: (
            page.evaluate("document.activeElement && document.activeElement.id")
            == "explain-message"
        ),
        what="the message field to have focus",
    )
    page.keyboard.type("Look at http://10.0.0.5/")
    page.keyboard.press("Enter")
    page.wait_for_selector("#explain-result")
    card = page.locator(".explain-url").first
    assert "blocked" in card.locator(".badge").inner_text()
    verdict = card.locator(".ssrf-verdict").inner_text()
    assert verdict.startswith("blocked: ") and len(verdict) > len("blocked: ")
    screenshot(page, "explain.png")


def test_non_staff_sees_no_admin_links(live, browser_context) -> None:
    page = browser_context.new_page()
    page.goto(live.base_url + "/login/")
    page.fill("#id_username", "live-user")
    page.fill("#id_password", "live-user-pass-123")
    page.press("#id_password", "Enter")
    page.wait_for_url(live.base_url + "/")
    for path in ("/", "/decisions/", "/explain/?message=http://10.0.0.5/"):
        page.goto(live.base_url + path)
        assert page.locator("a[href^='/admin/']").count() == 0, path
