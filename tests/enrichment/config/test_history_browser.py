"""Config versions in a real browser (Debian chromium via Playwright) against daphne: add a
scope rule in the admin, drag it to the top, preview its impact on recorded runs, save, find
the versions in the config history, read a diff, roll back."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import chromium, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHANNEL = "browser-dryrun"
DENY_CHANNEL = {"action": "deny", "match": {"channel": CHANNEL}}
MAKE_RUNS = f"""
from enrichment.models import Run
Run.objects.bulk_create(
    Run(channel={CHANNEL!r}, original_body=f"dry run {{i}}", outcome="no-links", duration_ms=2)
    for i in range(7)
)
"""
# A rule ahead of the one the test adds, so that there is something to drag it past.
ANOTHER_RULE = """
from enrichment.config.store import config_document
from enrichment.config.changes import config_replace_versioned
document = config_document()
scope = document["tools"]["links"].setdefault("scope", {"default": "allow", "rules": []})
other = {"action": "allow", "match": {"channel": "browser-dryrun-other"}}
if other not in scope.setdefault("rules", []):
    scope["rules"].append(other)
    config_replace_versioned(document=document, source="command", note="history test setup")
"""


@pytest.fixture
def page(live) -> Iterator[Any]:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 1100})
        page = context.new_page()
        page.goto(live.base_url + "/config/history/")
        page.fill("#id_username", "live-admin")
        page.fill("#id_password", "live-admin-pass-123")
        page.press("#id_password", "Enter")
        page.wait_for_url(re.compile(r"/config/history/$"))
        yield page


def current_config(page: Any, live: Any) -> dict[str, Any]:
    response = page.context.request.get(live.base_url + "/api/config")
    assert response.ok, response.text()
    return json.loads(response.text())


def test_edit_preview_save_diff_and_roll_back(live, page) -> None:
    live.manage("shell", "-c", MAKE_RUNS)
    live.manage("shell", "-c", ANOTHER_RULE)
    before = current_config(page, live)
    rules_before = (before["tools"]["links"].get("scope") or {}).get("rules", [])

    # The admin change form of the active config links to the history.
    page.goto(live.base_url + "/admin/enrichment/enrichmentconfig/")
    page.locator("#result_list tbody a").first.click()
    page.locator("#config-history-link").wait_for()

    # Edit: a new scope rule that denies the seeded channel. A new row goes last; it is
    # saved first, then dragged to the top (only saved rows have a drag handle).
    page.locator("#scope_rules-group .add-row a").click()
    total = int(page.input_value("#id_scope_rules-TOTAL_FORMS"))
    row = f"scope_rules-{total - 1}"
    page.select_option(f"[name='{row}-action']", "deny")
    page.fill(f"[name='{row}-channel']", CHANNEL)
    page.fill("#id_change_note", "add the dry-run rule")
    page.click("input[name='_continue']")
    page.wait_for_selector(".messagelist .success")
    added = current_config(page, live)["tools"]["links"]["scope"]["rules"]
    assert added[-1] == DENY_CHANNEL  # appended: earlier rules still match first
    page.wait_for_load_state("load")  # the drag handles are set up on "load"

    rows = page.locator("#scope_rules-group tr.has_original")
    ours = rows.filter(has=page.locator(f"input[value='{CHANNEL}']"))
    assert rows.count() > 1
    ours.locator("td.original p").drag_to(
        rows.first.locator("td.original p"), target_position={"x": 10, "y": 2}
    )
    assert rows.first.locator("input[name$='-channel']").input_value() == CHANNEL
    page.fill("#id_change_note", "deny the dry-run channel")

    # Preview impact: the unsaved order against the recorded runs.
    page.click("#preview-button")
    page.locator("#preview-total").wait_for(timeout=20_000)
    counts = page.locator("#preview-counts li").all_inner_texts()
    assert any(re.fullmatch(r"\d+ runs would become scope-deny", text) for text in counts), counts
    affected = page.locator("#preview-affected tbody tr")
    assert affected.count() >= 7
    assert "scope-deny" in affected.first.inner_text()
    save_screenshot(page, "config-preview-impact.png")
    # Nothing was stored by the preview.
    assert current_config(page, live)["tools"]["links"]["scope"]["rules"] == added

    # Save: a new version, with the rule first (first match wins).
    page.click("input[name='_continue']")
    page.wait_for_selector(".messagelist .success")
    after = current_config(page, live)
    assert after["tools"]["links"]["scope"]["rules"][0] == DENY_CHANNEL
    assert sorted(map(json.dumps, after["tools"]["links"]["scope"]["rules"])) == sorted(
        map(json.dumps, added)
    )

    # The history shows both saves, newest first, with their summaries.
    page.goto(live.base_url + "/config/history/")
    first, second = page.locator("#config-versions tbody tr").all()[:2]
    assert "admin" in first.inner_text() and "deny the dry-run channel" in first.inner_text()
    assert "moved" in first.inner_text()
    assert "links.scope: +1 rule" in second.inner_text()
    assert "add the dry-run rule" in second.inner_text()
    second.locator("a").first.click()

    # Its diff against the previous version names the rule.
    diff = page.locator("#config-diff")
    assert "tools.links.scope" in diff.inner_text() and CHANNEL in diff.inner_text()
    saved_number = int(re.search(r"/config/versions/(\d+)/", page.url).group(1))
    save_screenshot(page, "config-version-diff.png")

    # Roll back to the version before both saves: the confirmation names what changes.
    page.goto(live.base_url + f"/config/versions/{saved_number - 1}/")
    page.click("#restore-link")
    assert CHANNEL in page.locator(".config-changes").inner_text()
    page.click("#restore-confirm")
    page.wait_for_url(re.compile(rf"/config/versions/{saved_number + 2}/$"))
    assert f"restores v{saved_number - 1}" in page.inner_text("body")
    restored = current_config(page, live)
    assert (restored["tools"]["links"].get("scope") or {}).get("rules", []) == rules_before
    assert restored == before
