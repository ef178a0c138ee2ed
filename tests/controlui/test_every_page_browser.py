"""Every page, the demo's run pages and the admin change pages in a real chromium at a phone
(390x844) and a desktop (1440x900) size, light and dark (issue 33 acceptance).

On each: the document never scrolls sideways, no console error or failed request, and axe
finds no violation at all (any impact; /api/docs and the admin included). One browser and
the session's one live server; run pages are sampled one per outcome and derived status,
so the module stays well under three minutes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import chromium, layout_variants, save_screenshot
from tests.controlui.test_pages_browser import PageWatch, log_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VARIANTS = {
    "phone-light": ((390, 844), "light"),
    "phone-dark": ((390, 844), "dark"),
    "desktop-light": ((1440, 900), "light"),
    "desktop-dark": ((1440, 900), "dark"),
}
IDS = """
from enrichment.models import Agent, EnrichmentConfig, Run
from enrichment.selectors.status import with_media_flag
from richoutput.models import AssistantMessage
# The session's live server is shared: earlier tests may have left runs but no demo agents
# or assistant messages, which this test visits too.
if not (Run.objects.exists() and Agent.objects.exists() and AssistantMessage.objects.exists()):
    from django.core.management import call_command
    call_command("seed_demo", "--runs", "40", "--days", "2")
runs = list(with_media_flag(Run.objects.order_by("-pk"))[:400])
picked = {}
for run in runs:
    flags = (run.outcome, run.has_media, run.attempts_failed, run.fallback_used, run.dns_failed)
    picked.setdefault(flags, run.pk)
longest = max(runs, key=lambda run: len(run.original_body) + len(run.enriched_body)).pk
# The rarest kinds first (a DNS failure, a fallback, media), at most 6 pages in all.
kinds = sorted(picked, key=lambda flags: (-sum(flags[1:]), flags[0]))
ids = sorted({longest, *(picked[flags] for flags in kinds[:5])})
print("IDS", ",".join(map(str, ids)), EnrichmentConfig.objects.get().pk,
      Agent.objects.order_by("pk").first().pk, AssistantMessage.objects.order_by("pk").last().pk)
"""


@pytest.fixture(scope="module")
def demo(live) -> dict[str, Any]:
    output = live.manage("shell", "-c", IDS, timeout=300).stdout
    runs, config, agent, message = output.split("IDS", 1)[1].split()
    return {
        "runs": [int(run) for run in runs.split(",")],
        "config": int(config),
        "agent": int(agent),
        "message": int(message),
    }


def paths(demo: dict[str, Any]) -> dict[str, str]:
    pages = {
        "overview": "/",
        "history": "/decisions/",
        "history-facets": "/decisions/?outcome=success&outcome=skipped&range=7d&command=x",
        # a text filter: the rows first, then the counts swapped in (history-counts.js)
        "history-url": "/decisions/?url=example&outcome=success&outcome=error",
        "explain": "/explain/?message=see+https://example.com/a&channel=telegram&chatType=group",
        "tools": "/tools/",
        "render": "/render/",
        "messages": "/messages/",
        "message": f"/messages/{demo['message']}/",
        "config-history": "/config/history/",
        "not-found": "/decisions/999999999/",
        "api-docs": "/api/docs",
        "admin": "/admin/",
        "admin-runs": "/admin/enrichment/run/",
        "admin-config": f"/admin/enrichment/enrichmentconfig/{demo['config']}/change/",
        "admin-agent": f"/admin/enrichment/agent/{demo['agent']}/change/",
        "admin-run": f"/admin/enrichment/run/{demo['runs'][0]}/change/",
    }
    pages.update({f"run-{run}": f"/decisions/{run}/" for run in demo["runs"]})
    return pages


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def violations(page: Any) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{violation['id']} ({violation['impact']}): "
        + ", ".join(str(node["target"]) for node in violation["nodes"][:3])
        for violation in results.response["violations"]
    ]


# Counts beside a choice (the history's facets) that the layout squeezed onto two lines:
# "2" over "0" reads as two numbers.
BROKEN_COUNTS = """
[...document.querySelectorAll('.facet-count')].filter(element => {
  const height = element.getBoundingClientRect().height;
  return height > 1.9 * parseFloat(getComputedStyle(element).fontSize);  // two lines or more
}).map(element => element.textContent)
"""


@pytest.mark.parametrize("variant", layout_variants(VARIANTS, on_every_backend="desktop-light"))
def test_every_page_fits_has_no_errors_and_no_axe_violation(live, demo, browser, variant):
    (width, height), scheme = VARIANTS[variant]
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    log_in(context, live)
    page = context.new_page()
    problems: dict[str, list[str]] = {}
    for name, path in paths(demo).items():
        watch = PageWatch(page)
        page.goto(live.base_url + path)
        page.wait_for_load_state("networkidle")
        if name == "api-docs":
            page.wait_for_selector(".swagger-ui .opblock", timeout=15_000)
            # Dark mode darkens the docs too instead of leaving a white block (item 11).
            drawn = page.evaluate("getComputedStyle(document.querySelector('.api-docs')).filter")
            if (scheme == "dark") != ("invert" in drawn):
                problems[path] = [f"api docs filter {drawn!r} in {scheme} mode"]
        found = [error for error in watch.errors if not (name == "not-found" and "404" in error)]
        scroll_width = page.evaluate("document.documentElement.scrollWidth")
        if scroll_width > width:
            found.append(f"document is {scroll_width} px wide")
        found += [f"count broken over lines: {text!r}" for text in page.evaluate(BROKEN_COUNTS)]
        found += violations(page)
        if found:
            save_screenshot(page, f"every-page/{variant}-{name}.png")
            problems.setdefault(path, []).extend(found)
        page.remove_listener("console", watch.console)
        page.remove_listener("response", watch.response)
    context.close()
    assert not problems, "\n".join(f"{path}: {found}" for path, found in problems.items())


def test_an_offline_enrichment_from_the_overview_says_why(live, demo, browser) -> None:
    """Issue 33, item 4: "Recorded as run #N skipped" comes with its reason, and a host that
    does not resolve reads as a DNS failure, not as blocked."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    log_in(context, live)
    page = context.new_page()
    page.goto(live.base_url + "/")
    page.fill("#enrich-body", "see https://offline-host.invalid/downloads/ please")
    page.press("#enrich-body", "Enter")
    page.wait_for_selector("#enrich-result[data-state=done]", timeout=30_000)
    reasons = page.locator("#enrich-reasons li").all_inner_texts()
    assert reasons == [
        "https://offline-host.invalid/downloads/ — DNS failure: the host does not resolve"
    ], reasons
    context.close()


def test_a_choice_count_stays_whole_beside_a_label_that_wraps(live, browser) -> None:
    """A long choice ("fallback succeeded") in a narrow sidebar wraps its label, never its
    count: "2" over "0" would read as two numbers."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_content(
        f'<link rel="stylesheet" href="{live.base_url}/static/css/app.css">'
        '<div style="width: 9rem"><label class="facet-choice"><input type="checkbox">'
        '<span class="facet-value">fallback succeeded</span>'
        ' <span class="facet-count">2048</span></label></div>'
    )
    page.wait_for_load_state("networkidle")
    label = page.locator(".facet-value").bounding_box()
    assert label is not None and label["height"] > 30, "the label should wrap at this width"
    assert page.evaluate(BROKEN_COUNTS) == []
    context.close()


def test_a_long_unbroken_token_in_a_card_wraps_on_a_phone(live, browser) -> None:
    """A run's media line names the CLI that answered by its whole path (one long "word"):
    on a phone it breaks inside the card instead of widening the page sideways."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    command = "cli//srv/deployments/controlui/releases/current/enrichment/demo/demo_cli.py"
    page.set_content(
        f'<link rel="stylesheet" href="{live.base_url}/static/css/app.css">'
        f'<main class="page"><p class="card media-status">Media: image ok ({command})'
        " · audio none · video none</p></main>"
    )
    page.wait_for_load_state("networkidle")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    card = page.locator(".media-status").bounding_box()
    assert card is not None and card["x"] + card["width"] <= 390
    context.close()


# Every piece of text drawn in a chart (its axis labels), with its rendered box: the heading,
# the legend and the figures above the histogram are ordinary page text, left out.
CHART_TEXT = """
selector => {
  const root = document.querySelector(selector);
  if (!root) return null;
  const found = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const owner = node.parentElement;
    if (!node.textContent.trim() || owner.closest('h2, .chart-legend, .duration-figures, title')
        || getComputedStyle(owner).visibility === 'hidden') continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const box = range.getBoundingClientRect();
    if (box.height > 0) found.push({text: node.textContent.trim(), top: box.top,
                                    height: box.height, left: box.left, right: box.right});
  }
  return found;
}
"""
GRIDLINES = """
[...document.querySelectorAll('#outcome-chart line')].map(line => {
  const box = line.getBoundingClientRect();
  return box.top + box.height / 2;
})
"""


@pytest.mark.parametrize("variant", ["phone-light", "desktop-dark"])
def test_chart_labels_keep_the_text_size_and_sit_on_their_marks(live, demo, browser, variant):
    """The charts' axis labels read at the page's small-text size on a phone and on a wide
    screen alike (they used to scale with the chart: 5 px high on a phone, larger than the
    body text at 1440 px); none overlaps another, and each y label sits on its gridline."""
    (width, height), scheme = VARIANTS[variant]
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    log_in(context, live)
    page = context.new_page()
    for path, chart, least in (("/", "#outcome-chart", 5), ("/decisions/", "#durations", 2)):
        page.goto(live.base_url + path)
        page.wait_for_load_state("networkidle")
        labels = page.evaluate(CHART_TEXT, chart)
        assert labels and len(labels) >= least, f"{path}: {labels}"
        badly_sized = [
            (label["text"], round(label["height"], 1))
            for label in labels
            if not 10 <= label["height"] <= 18
        ]
        assert not badly_sized, f"{path} at {width} px: {badly_sized}"
        rows: dict[int, list[dict[str, float]]] = {}
        for label in labels:
            rows.setdefault(round(label["top"]), []).append(label)
        for row in rows.values():
            row.sort(key=lambda label: label["left"])
            overlapping = [
                (a["text"], b["text"])
                for a, b in zip(row, row[1:], strict=False)
                if a["right"] > b["left"] + 0.5
            ]
            assert not overlapping, f"{path} at {width} px: {overlapping}"
        if chart == "#outcome-chart":
            for line in page.evaluate(GRIDLINES):
                middles = [label["top"] + label["height"] / 2 for label in labels]
                assert min(abs(line - middle) for middle in middles) <= 2, (line, labels)
    context.close()
