"""A URL fragment's history in chromium, at 1440×900 and 390×844, light and dark: the rows
are shown first and the count, the facet counts and the duration chart are swapped in once
read (``history-counts.js``); a box ticked meanwhile stays ticked; a failed read says so
and offers to try again. Each page: no horizontal overflow, no console error, no serious
axe violation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import chromium, save_screenshot, wait_until
from tests.controlui.test_pages_browser import PageWatch, log_in
from tests.enrichment.test_history_sort_browser import check_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOST = "counts-browser.example"
VARIANTS = {"desktop-dark": ((1440, 900), "dark"), "phone-light": ((390, 844), "light")}
MAKE_RUNS = f"""
from datetime import timedelta
from django.utils import timezone
from enrichment.models import Run, UrlDecision
if not UrlDecision.objects.filter(url__contains={HOST!r}).exists():
    now = timezone.now()
    for i in range(12):
        run = Run.objects.create(
            created_at=now - timedelta(minutes=40 + i),
            channel="slack" if i % 3 == 0 else "telegram",
            chat_type="group",
            session_key=f"agent:main:counts:{{i}}",
            outcome="error" if i % 4 == 0 else "success",
            duration_ms=100 + i * 50,
            url_count=1,
        )
        UrlDecision.objects.create(run=run, position=0, url=f"https://{HOST}/guide/{{i}}")
"""
PAGE = f"/decisions/?url={HOST}/guide&limit=5"
# Runs still running: no duration, so the counted page draws no chart.
UNTIMED = "untimed-browser.example"
MAKE_UNTIMED = f"""
from django.utils import timezone
from enrichment.models import Run, UrlDecision
if not UrlDecision.objects.filter(url__contains={UNTIMED!r}).exists():
    for i in range(3):
        run = Run.objects.create(created_at=timezone.now(), outcome="running", url_count=1)
        UrlDecision.objects.create(run=run, position=0, url=f"https://{UNTIMED}/{{i}}")
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def fragment_runs(live) -> None:
    live.manage("shell", "-c", MAKE_RUNS)


def facet_counts(page: Any, name: str) -> dict[str, str]:
    labels = page.locator(f"#facet-{name} .facet-choice")
    found = {}
    for index in range(labels.count()):
        label = labels.nth(index)
        if label.locator(".facet-count").count():
            found[label.locator("input").get_attribute("value")] = label.locator(
                ".facet-count"
            ).inner_text()
    return found


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_counts_arrive_after_the_rows(live, fragment_runs, browser, variant) -> None:
    (width, height), scheme = VARIANTS[variant]
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    log_in(context, live)
    page = context.new_page()
    watch = PageWatch(page)
    # Hold the counts' request until a box has been ticked.
    held: list[Any] = []
    page.route(re.compile(r".*/decisions/counts/\?.*"), lambda route: held.append(route))
    page.goto(live.base_url + PAGE)
    assert page.locator("table.history-table tbody tr").count() == 5
    assert page.locator("#result-count").inner_text() == "more than 5 runs"
    assert "counting…" in page.locator("#counts-note").inner_text()
    assert page.locator(".facet-count").count() == 0
    save_screenshot(page, f"history-counts-pending-{variant}.png")
    wait_until(lambda: bool(held), what="the counts' request")
    page.locator("#facet-outcome input[value=error]").check()
    page.evaluate("document.getElementById('counts-note').keptElement = true")
    held[0].continue_()

    wait_until(lambda: page.locator("#counts-pending").count() == 0, what="the counts")
    assert page.locator("#result-count").inner_text() == "12 runs"
    assert page.locator("#result-count").get_attribute("data-exact") == "true"
    assert facet_counts(page, "outcome")["error"] == "3"
    assert facet_counts(page, "channel") == {"telegram": "8", "slack": "4"}
    assert page.locator("#duration-p50").is_visible()
    # The live regions are filled in place (a replaced one is not announced), and not busy.
    assert page.evaluate("document.getElementById('counts-note').keptElement") is True
    assert page.locator("#counts-note").get_attribute("aria-busy") is None
    assert page.locator("#result-count").get_attribute("aria-live") == "polite"
    # The box ticked while the counts were read is still ticked, and applies.
    assert page.locator("#facet-outcome input[value=error]").is_checked()
    problems = check_page(page, watch, width)
    save_screenshot(page, f"history-counts-{variant}.png")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(r"outcome=error"))
    assert page.locator("table.history-table tbody tr").count() == 3
    wait_until(lambda: page.locator("#result-count").inner_text() == "3 runs", what="recount")
    context.close()
    assert not problems, problems


def test_a_failed_count_says_so_and_offers_to_try_again(live, fragment_runs, browser) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    log_in(context, live)
    page = context.new_page()
    page.route(re.compile(r".*/decisions/counts/\?.*"), lambda route: route.abort())
    page.goto(live.base_url + PAGE)
    note = page.locator("#counts-note")
    wait_until(lambda: "could not be read" in note.inner_text(), what="the failure note")
    again = note.get_by_role("link", name="try again")
    assert "counts=1" in (again.get_attribute("href") or "")
    page.unroute(re.compile(r".*/decisions/counts/\?.*"))
    again.click()  # the page with its counts, as without scripts
    page.wait_for_url(re.compile(r"counts=1"))
    assert page.locator("#result-count").inner_text() == "12 runs"
    assert facet_counts(page, "outcome")["error"] == "3"
    context.close()


def test_a_page_without_durations_loses_the_pending_chart(live, browser) -> None:
    live.manage("shell", "-c", MAKE_UNTIMED)
    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="dark")
    log_in(context, live)
    page = context.new_page()
    watch = PageWatch(page)
    page.goto(f"{live.base_url}/decisions/?url={UNTIMED}")
    wait_until(lambda: page.locator("#counts-pending").count() == 0, what="the counts")
    assert page.locator("#result-count").inner_text() == "3 runs"
    # No run has a duration: the pending chart is gone, not left "reading" for ever.
    assert page.locator("#durations").count() == 0
    assert "Reading the durations" not in page.content()
    problems = check_page(page, watch, 390)
    context.close()
    assert not problems, problems
