"""Sorting the history and saving a view, in chromium at 1440×900 and 390×844.

Desktop: the Duration header is a link reached from the keyboard; Enter sorts longest first,
again shortest first. Phone (headers fold into cards): the Order select does the same. Then
the view is saved under a name, shared, opened again from its link and deleted. Each page:
no horizontal overflow, no console error or failed request, no serious axe violation.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import chromium, save_screenshot
from tests.controlui.test_pages_browser import OVERFLOWING, PageWatch, serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHANNEL = "browser-sort"
VIEWPORTS = {"desktop": (1440, 900), "phone": (390, 844)}
MAKE_RUNS = f"""
from datetime import timedelta
from django.utils import timezone
from enrichment.models import Run
if not Run.objects.filter(channel={CHANNEL!r}).exists():
    now = timezone.now()
    Run.objects.bulk_create(
        Run(
            created_at=now - timedelta(minutes=30 + i),
            channel={CHANNEL!r},
            chat_type="group",
            session_key=f"agent:main:sort:{{i}}",
            outcome="running" if i == 0 else "success",
            duration_ms=None if i == 0 else (i * 7) % 12 * 100 + 50,
            url_count=i % 4,
        )
        for i in range(12)
    )
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def sort_runs(live) -> None:
    live.manage("shell", "-c", MAKE_RUNS)


def durations(page: Any) -> list[str]:
    return page.locator("table.history-table tbody td[data-label=Duration]").all_inner_texts()


def millis(texts: list[str]) -> list[int]:
    return [int(text.removesuffix(" ms")) for text in texts if text.endswith(" ms")]


def check_page(page: Any, watch: PageWatch, width: int) -> list[str]:
    found = list(watch.errors)
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    if scroll_width > width:
        found.append(f"document is {scroll_width} px wide")
    found += [f"overflows: {item}" for item in page.evaluate(OVERFLOWING)]
    found += serious_violations(page)
    return found


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_sort_by_a_column_and_save_the_view(live, sort_runs, browser, viewport) -> None:
    width, height = VIEWPORTS[viewport]
    context = browser.new_context(viewport={"width": width, "height": height})
    cookies = live.login_cookies()
    context.add_cookies([{"name": k, "value": v, "url": live.base_url} for k, v in cookies.items()])
    page = context.new_page()
    watch = PageWatch(page)
    problems: dict[str, list[str]] = {}

    page.goto(f"{live.base_url}/decisions/?channel={CHANNEL}")
    assert len(durations(page)) == 12
    if viewport == "desktop":
        header = page.locator("th", has=page.locator("a.sort-link", has_text="Duration"))
        assert header.get_attribute("aria-sort") == "none"
        link = header.locator("a")
        link.focus()  # a link: reachable from the keyboard, Enter follows it
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"sort=-duration"))
        header = page.locator("th", has=page.locator("a.sort-link", has_text="Duration"))
        assert header.get_attribute("aria-sort") == "descending"
        assert "▼" in header.inner_text()
        shown = millis(durations(page))
        assert shown == sorted(shown, reverse=True) and shown[0] == 1150
        assert durations(page)[-1] == "—"  # the run without a duration comes last
        header.locator("a").click()
        page.wait_for_url(re.compile(r"sort=duration"))
        header = page.locator("th", has=page.locator("a.sort-link", has_text="Duration"))
        assert header.get_attribute("aria-sort") == "ascending"
        shown = millis(durations(page))
        assert shown == sorted(shown) and durations(page)[-1] == "—"
        problems["sorted ascending"] = check_page(page, watch, width)
        save_screenshot(page, f"history-sort-{viewport}.png")
        header.locator("a").click()  # back to longest first for the saved view
        page.wait_for_url(re.compile(r"sort=-duration"))
    else:
        # Phone: the table's header row is folded into cards; the Order select sorts.
        page.select_option("#filter-sort", label="longest first")
        page.get_by_role("button", name="Filter").click()
        page.wait_for_url(re.compile(r"sort=-duration"))
        shown = millis(durations(page))
        assert shown == sorted(shown, reverse=True) and shown[0] == 1150
    assert "channel=" + CHANNEL in page.url
    problems["sorted"] = check_page(page, watch, width)
    save_screenshot(page, f"history-sorted-{viewport}.png")

    # Save it as a shared view, then open it again from the list.
    name = f"Slowest {viewport} {uuid.uuid4().hex[:6]}"
    page.fill("#view-name", name)
    page.get_by_label("Shared with everyone").check()
    page.get_by_role("button", name="Save this view").click()
    page.wait_for_load_state("load")
    assert f"Saved the view “{name}”." in page.locator(".flash").inner_text()
    page.goto(live.base_url + "/decisions/")
    entry = page.locator("#saved-view-list li", has_text=name)
    assert "shared" in entry.inner_text()
    problems["views listed"] = check_page(page, watch, width)
    save_screenshot(page, f"history-saved-views-{viewport}.png")
    entry.get_by_role("link", name=name).click()
    page.wait_for_url(re.compile(r"sort=-duration"))
    assert "channel=" + CHANNEL in page.url
    assert page.locator("#filter-sort").input_value() == "-duration"
    shown = millis(durations(page))
    assert shown[0] == 1150 and shown == sorted(shown, reverse=True)

    # Delete it again (the live server is shared by the session's tests).
    page.locator("#saved-view-list li", has_text=name).get_by_role("button").click()
    page.wait_for_load_state("load")
    assert f"Deleted the view “{name}”." in page.locator(".flash").inner_text()
    assert page.locator("#saved-view-list li", has_text=name).count() == 0
    problems["after delete"] = check_page(page, watch, width)
    context.close()
    assert not any(problems.values()), problems
