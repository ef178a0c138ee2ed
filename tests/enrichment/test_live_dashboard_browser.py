"""Live everywhere it matters (chromium against daphne): a run recorded elsewhere updates
the overview's counters, chart, recent runs and feed, and the history offers "N new runs"."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import chromium, save_screenshot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def context(live) -> Iterator[Any]:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        cookies = live.login_cookies()
        context.add_cookies(
            [{"name": k, "value": v, "url": live.base_url} for k, v in cookies.items()]
        )
        yield context
        context.close()


def enrich(context: Any, live: Any, body: str, channel: str) -> int:
    csrf = next(c["value"] for c in context.cookies() if c["name"] == "csrftoken")
    response = context.request.post(
        live.base_url + "/api/enrich",
        data=json.dumps({"body": body, "channel": channel}),
        headers={"Content-Type": "application/json", "X-CSRFToken": csrf},
    )
    assert response.ok, response.text()
    return int(response.json()["runId"])


def test_overview_and_history_update_without_reload(live, context) -> None:
    first = enrich(context, live, "a run before the page opens", "live-before")
    overview = context.new_page()
    overview.goto(live.base_url + "/?period=24h")
    overview.wait_for_selector("#live-status[data-state=open]")
    # The feed opens with the last runs instead of empty.
    assert overview.locator(f"#live-feed li[data-run-id='{first}']").count() == 1
    total_before = int(overview.locator("#total-runs").inner_text())

    history = context.new_page()
    history.goto(live.base_url + "/decisions/?channel=live-after")
    history.wait_for_selector("#live-marker[data-state=open]", state="attached")
    assert history.locator("#new-runs").is_hidden()

    run_id = enrich(context, live, "no links here", "live-after")
    enrich(context, live, "another channel", "live-elsewhere")

    overview.wait_for_selector(f"#recent-runs tr[data-run-id='{run_id}']", timeout=15_000)
    wait_until(
        lambda: int(overview.locator("#total-runs").inner_text()) >= total_before + 2,
        what="the total to count both new runs",
    )
    assert overview.locator(f"#live-feed li[data-run-id='{run_id}']").count() == 1
    # The chart and its drill-down links were swapped in too (still there, still linked).
    assert overview.locator("#outcome-chart a.chart-bar").count() == 24
    # Relative time on the new rows, exact UTC on hover.
    when = overview.locator(f"#recent-runs tr[data-run-id='{run_id}'] time")
    assert when.inner_text() in ("just now", "10 s ago") or when.inner_text().endswith("s ago")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", when.get_attribute("title"))
    save_screenshot(overview, "live-overview.png")

    # Only the run that matches the history's filter counts.
    history.wait_for_selector("#new-runs:not([hidden])", timeout=15_000)
    assert history.locator("#new-runs").inner_text() == "1 new run — show"
    history.click("#new-runs a")
    history.wait_for_selector(f"a[href^='/decisions/{run_id}/']")
    save_screenshot(history, "live-history.png")


def test_keyboard_moves_through_history_and_runs(live, context) -> None:
    channel = "keys-channel"
    ids = [enrich(context, live, f"keyboard run {i}", channel) for i in range(3)]
    page = context.new_page()
    page.goto(live.base_url + f"/decisions/?channel={channel}")
    page.locator("body").click(position={"x": 5, "y": 300})  # leave the autofocused select
    page.keyboard.press("j")
    page.keyboard.press("j")
    selected = page.locator("table.history-table tbody tr.selected")
    assert selected.count() == 1
    # Newest first: the second row is the middle run.
    assert f"#{ids[1]}" in selected.inner_text()
    page.keyboard.press("k")
    assert f"#{ids[2]}" in page.locator("tr.selected").inner_text()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/decisions/{ids[2]}/\?channel={channel}"))
    # On the run page j goes to the older run within the same filter.
    page.keyboard.press("j")
    page.wait_for_url(re.compile(rf"/decisions/{ids[1]}/\?channel={channel}"))
    # Typing in a field is not navigation.
    page.goto(live.base_url + f"/decisions/?channel={channel}")
    page.fill("#filter-q", "jjj")
    assert page.locator("tr.selected").count() == 0
