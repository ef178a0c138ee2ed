"""Ordering scope rules in the admin in a real chromium: drag a row by its handle, or move it
with the keyboard; the saved config keeps that order. The page has no console error and no
serious accessibility violation, at a desktop and a phone size."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import chromium, save_screenshot
from tests.controlui.test_pages_browser import PageWatch, log_in, serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STORE_RULES = """
from enrichment.config.store import config_document
from enrichment.config.changes import config_replace_versioned
document = config_document()
document["tools"]["links"]["scope"] = {"default": "allow", "rules": [
    {"action": "allow", "match": {"channel": "order-a"}},
    {"action": "deny", "match": {"channel": "order-b"}},
    {"action": "allow", "match": {"channel": "order-c"}},
]}
config_replace_versioned(document=document, source="command", note="ordering test")
"""


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def stored_channels(page: Any, live: Any) -> list[str]:
    response = page.context.request.get(live.base_url + "/api/config")
    assert response.ok, response.text()
    rules = json.loads(response.text())["tools"]["links"]["scope"]["rules"]
    return [rule["match"]["channel"] for rule in rules]


def shown_channels(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "#scope_rules-group tr.has_original input[name$='-channel']",
        "inputs => inputs.map(input => input.value)",
    )


def open_config(page: Any, live: Any) -> None:
    page.goto(live.base_url + "/admin/enrichment/enrichmentconfig/")
    page.locator("#result_list tbody a").first.click()
    page.locator("#scope_rules-group tr.has_original").first.wait_for()
    page.wait_for_load_state("load")  # the library sets the rows up on "load"


def row_of(page: Any, channel: str) -> Any:
    return page.locator(
        "#scope_rules-group tr.has_original", has=page.locator(f"input[value='{channel}']")
    )


def test_drag_and_keyboard_reorder_scope_rules_and_the_save_keeps_it(live, browser) -> None:
    live.manage("shell", "-c", STORE_RULES)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    log_in(context, live)
    page = context.new_page()
    watch = PageWatch(page)
    open_config(page, live)
    assert shown_channels(page) == ["order-a", "order-b", "order-c"]
    # No number to type: the position inputs are hidden.
    assert page.locator("#scope_rules-group input[name$='-position']:visible").count() == 0

    # Drag "order-c" by its handle onto the top of the first row.
    handle = row_of(page, "order-c").locator("td.original p")
    first = row_of(page, "order-a").locator("td.original p")
    handle.drag_to(first, target_position={"x": 10, "y": 2})
    assert shown_channels(page) == ["order-c", "order-a", "order-b"]
    save_screenshot(page, "admin-ordering-dragged.png", full_page=False)

    # Keyboard: Tab reaches the row's buttons, Enter moves "order-b" up one place.
    up = row_of(page, "order-b").get_by_role("button", name="Move up: deny channel=order-b")
    up.focus()
    page.keyboard.press("Enter")
    assert shown_channels(page) == ["order-c", "order-b", "order-a"]
    status = page.locator("#scope_rules-group .sort-status")
    assert "position 2 of 3" in status.inner_text()
    # The library's "move to last" arrow is focusable and answers Enter too.
    last = row_of(page, "order-c").get_by_role("button", name="Move to last position")
    last.focus()
    page.keyboard.press("Enter")
    assert shown_channels(page) == ["order-b", "order-a", "order-c"]

    errors = list(watch.errors)  # before axe, whose injected styles the CSP refuses
    problems = serious_violations(page)
    assert not problems, problems
    page.fill("#id_change_note", "reordered in the browser")
    page.click("input[name='_continue']")
    page.wait_for_selector(".messagelist .success")
    # Stored in the order shown (first match wins), and shown so after the reload.
    assert stored_channels(page, live) == ["order-b", "order-a", "order-c"]
    assert shown_channels(page) == ["order-b", "order-a", "order-c"]
    page.goto(live.base_url + "/config/history/")
    newest = page.locator("#config-versions tbody tr").first.inner_text()
    assert "reordered in the browser" in newest
    assert not errors, errors
    context.close()


def test_the_sortable_admin_form_at_phone_size(live, browser) -> None:
    live.manage("shell", "-c", STORE_RULES)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    log_in(context, live)
    page = context.new_page()
    watch = PageWatch(page)
    open_config(page, live)
    save_screenshot(page, "admin-ordering-phone.png")
    # The row buttons are on screen and usable at 390 px.
    down = row_of(page, "order-a").get_by_role("button", name=re.compile("^Move down"))
    down.scroll_into_view_if_needed()
    down.click()
    assert shown_channels(page) == ["order-b", "order-a", "order-c"]
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert not watch.errors, watch.errors
    problems = serious_violations(page)
    assert not problems, problems
    context.close()
