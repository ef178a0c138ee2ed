"""/problems/ and a problem page in a real chromium, at a phone (390×844) and a desktop
(1440×900) size: the list fits without sideways scrolling, a problem opens from it, its
state changes with a button (POST + CSRF), and axe finds nothing serious or critical."""

from __future__ import annotations

import re

import pytest

from tests.browser import chromium, save_screenshot
from tests.controlui.test_pages_browser import OVERFLOWING, PageWatch, log_in, serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VIEWPORTS = {"phone": (390, 844), "desktop": (1440, 900)}


@pytest.fixture(scope="module")
def seeded(live) -> None:
    live.manage("seed_demo", "--runs", "30", "--days", "2", timeout=300)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_problem_list_and_page_fit_work_and_are_accessible(live, seeded, viewport) -> None:
    width, height = VIEWPORTS[viewport]
    with chromium() as browser:
        context = browser.new_context(viewport={"width": width, "height": height})
        log_in(context, live)
        page = context.new_page()
        watch = PageWatch(page)
        page.goto(live.base_url + "/problems/?state=all")
        rows = page.locator("#problems tbody tr")
        assert rows.count() > 0
        assert page.locator("#problems svg.sparkline").count() == 2 * rows.count()
        save_screenshot(page, f"problems/{viewport}-list.png")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.evaluate(OVERFLOWING) == []
        assert serious_violations(page) == []

        link = rows.first.locator("td.problem-title a")
        box = link.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
        link.click()
        page.wait_for_url(re.compile(r"/problems/\d+/$"))
        state = page.locator("#problem-state")
        before = state.inner_text()
        button = page.locator("form.state-actions button").first
        target = button.inner_text()
        button.click()
        page.wait_for_load_state("networkidle")
        assert state.inner_text() != before
        assert {"Resolve": "Resolved", "Ignore": "Ignored", "Reopen": "Open"}[target] == (
            state.inner_text()
        )
        save_screenshot(page, f"problems/{viewport}-problem.png")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert serious_violations(page) == []
        assert watch.errors == []
        context.close()
