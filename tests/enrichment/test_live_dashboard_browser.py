"""Live everywhere it matters (chromium against daphne): a run recorded elsewhere updates
the overview's counters, chart, recent runs and feed, and the history offers "N new runs"."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import chromium, save_screenshot

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
    history.wait_for_function("document.getElementById('live-marker').dataset.state === 'open'")
    assert history.locator("#new-runs").is_hidden()

    run_id = enrich(context, live, "no links here", "live-after")
    enrich(context, live, "another channel", "live-elsewhere")

    overview.wait_for_selector(f"#recent-runs tr[data-run-id='{run_id}']", timeout=15_000)
    overview.wait_for_function(
        f"Number(document.getElementById('total-runs').textContent) >= {total_before + 2}"
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
