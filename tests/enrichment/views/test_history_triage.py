"""History triage (issue 34) and filters that never vanish (issue 33, item 3): multi-select
facets with counts, time presets, removable chips for every active filter (hidden ones too),
duration p50/p95 with a histogram, and fallback-succeeded runs flagged in the list."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest
from django.utils import timezone

from common.distribution import percentile, summarize_durations
from enrichment.models import Run
from tests.enrichment.views.test_history import make_run, run_ids

pytestmark = pytest.mark.django_db


def runs(count: int, *, minutes_ago: int = 1, **fields) -> list[Run]:
    now = timezone.now()
    return [
        make_run(urls=0, created_at=now - timedelta(minutes=minutes_ago + i), **fields)
        for i in range(count)
    ]


def chips(html: str) -> dict[str, str]:
    """Chip label -> the query its × link opens."""
    block = re.search(r'<ul class="chips" id="filter-chips".*?</ul>', html, re.S)
    if block is None:
        return {}
    found = re.findall(
        r'<span>([^<]*)</span> <a class="chip-remove" href="\?([^"]*)"', block.group(0)
    )
    return {unescape(label): unescape(query) for label, query in found}


def test_several_outcomes_at_once_on_the_page_and_the_api(user_client) -> None:
    success = runs(2, outcome="success")
    skipped = runs(1, outcome="skipped")
    runs(1, outcome="error")
    html = user_client.get("/decisions/?outcome=success&outcome=skipped").content.decode()
    assert sorted(run_ids(html)) == sorted(run.pk for run in success + skipped)
    for value in ("success", "skipped"):
        assert re.search(rf'name="outcome" value="{value}" form="history-filters" checked', html)
    assert not re.search(r'name="outcome" value="error" form="history-filters" checked', html)
    # Counts under the other filters: error still says how many it would add.
    assert re.search(r'value="error"[^>]*>\s*<span class="facet-value">error</span> '
                     r'<span class="facet-count">1</span>', html)  # fmt: skip
    api = user_client.get("/api/decisions?outcome=success,skipped").json()
    assert len(api["items"]) == 3
    repeated = user_client.get("/api/decisions?outcome=success&outcome=skipped").json()
    assert len(repeated["items"]) == 3


def test_several_channels_ignore_case_and_chat_types_combine(user_client) -> None:
    runs(2, channel="Slack", chat_type="group")
    runs(1, channel="telegram", chat_type="direct")
    runs(1, channel="discord", chat_type="group")
    api = user_client.get("/api/decisions?channel=slack,TELEGRAM").json()
    assert len(api["items"]) == 3
    api = user_client.get("/api/decisions?channel=slack,telegram&chatType=direct").json()
    assert len(api["items"]) == 1


def test_status_facet_counts_and_multi_select(user_client) -> None:
    recovered = make_run(urls=1, attempts=2)  # first entry failed, the fallback succeeded
    plain = make_run(urls=1, attempts=1)
    html = user_client.get("/decisions/").content.decode()
    status = re.search(r'<fieldset class="facet" id="facet-status">.*?</fieldset>', html, re.S)
    assert status is not None
    assert re.search(r'fallback succeeded</span> <span class="facet-count">1</span>', status[0])
    # The list says so on the row although the outcome is success.
    row = html.split(f'href="/decisions/{recovered.pk}/', 1)[1].split("</tr>", 1)[0]
    assert "badge badge-fallback" in row and "success" in row
    plain_row = html.split(f'href="/decisions/{plain.pk}/', 1)[1].split("</tr>", 1)[0]
    assert "badge-fallback" not in plain_row
    both = user_client.get("/decisions/?status=fallback&status=media").content.decode()
    assert run_ids(both) == [recovered.pk]


def test_a_hidden_filter_has_a_chip_and_survives_a_change(user_client) -> None:
    """The overview's failing-CLI link opens ?command=…; the filter must stay visible and
    must not be dropped when another filter changes (issue 33, item 3)."""
    failing = make_run(urls=1, attempts=2)  # "primary-cli" failed an attempt
    make_run(urls=0)
    html = user_client.get("/decisions/?command=primary-cli&outcome=success").content.decode()
    assert run_ids(html) == [failing.pk]
    found = chips(html)
    assert found["Failed CLI entry: primary-cli"] == "outcome=success"
    assert found["Outcome: success"] == "command=primary-cli"
    # The filter form carries it, so pressing Filter after changing Outcome keeps it.
    form = re.search(r'<form class="filters card" id="history-filters".*?</form>', html, re.S)
    assert form is not None
    assert '<input type="hidden" name="command" value="primary-cli">' in form[0]


def test_chips_remove_one_value_of_a_multi_select(user_client) -> None:
    runs(1, outcome="success")
    html = user_client.get(
        "/decisions/?outcome=success&outcome=error&sessionKey=agent:&sessionMatch=contains"
    ).content.decode()
    found = chips(html)
    assert found["Outcome: success"] == "outcome=error&sessionKey=agent%3A&sessionMatch=contains"
    assert found["Session key contains: agent:"] == "outcome=success%2Cerror"


def test_time_presets_keep_other_filters_and_move_with_the_clock(user_client) -> None:
    recent = runs(1, minutes_ago=30, outcome="success")
    runs(1, minutes_ago=3 * 60, outcome="success")
    runs(1, minutes_ago=3 * 24 * 60, outcome="success")
    html = user_client.get("/decisions/?outcome=success&range=1h").content.decode()
    assert run_ids(html) == [recent[0].pk]
    assert chips(html)["Last 1 h"] == "outcome=success"
    presets = re.search(r'<nav class="presets.*?</nav>', html, re.S)[0]
    assert 'href="?outcome=success&amp;range=24h"' in presets
    assert re.search(
        r'class="button active" href="\?outcome=success&amp;range=1h" aria-current', presets
    )
    assert len(run_ids(user_client.get("/decisions/?range=24h").content.decode())) == 2
    assert len(run_ids(user_client.get("/decisions/?range=7d").content.decode())) == 3
    # The run links carry the preset, not a frozen "since".
    assert "range=1h" in re.search(r'href="/decisions/\d+/\?([^"]*)"', html).group(1)
    bad = user_client.get("/decisions/?range=2y")
    assert bad.status_code == 400 and "range: unknown range" in bad.content.decode()
    assert user_client.get("/api/decisions?range=2y").status_code in (400, 422)


def test_durations_p50_p95_and_histogram_follow_the_filter(user_client) -> None:
    for duration in (5, 20, 40, 60, 80):
        runs(1, outcome="success", duration_ms=duration)
    runs(1, outcome="error", duration_ms=5000)
    html = user_client.get("/decisions/?outcome=success").content.decode()
    assert 'id="duration-p50">40 ms<' in html and 'id="duration-p95">80 ms<' in html
    assert (
        'aria-label="Runs per duration: &lt; 10 ms: 1 run, 10–30 ms: 1 run, 30–100 ms: 3 runs'
        in html
    )
    html = user_client.get("/decisions/").content.decode()
    assert 'id="duration-p95">5000 ms<' in html


def test_percentiles_are_nearest_rank() -> None:
    assert percentile([], 0.5) is None
    assert percentile([7], 0.95) == 7
    assert percentile(list(range(1, 101)), 0.95) == 95
    assert percentile(list(range(1, 101)), 0.5) == 50
    summary = summarize_durations([1, 1, 1, 20_000])
    assert [b.count for b in summary.buckets] == [3, 0, 0, 0, 0, 0, 0, 1]
    assert summary.buckets[0].height == summary.chart_height
    assert summary.buckets[-1].height == round(summary.chart_height / 3)


def test_too_many_values_are_refused_by_name(user_client) -> None:
    query = "&".join(f"channel=c{i}" for i in range(31))
    response = user_client.get("/api/decisions?" + query)
    assert (
        response.status_code in (400, 422)
        and "channel: at most 30 values" in response.content.decode()
    )


def facet(html: str, name: str) -> dict[str, int]:
    """A facet's choices and their counts, as the page shows them."""
    block = re.search(rf'<fieldset class="facet" id="facet-{name}">.*?</fieldset>', html, re.S)
    assert block is not None, name
    found = re.findall(
        r'value="([^"]*)"[^>]*>\s*<span class="facet-value">[^<]*</span>'
        r' <span class="facet-count">(\d+)</span>',
        block[0],
    )
    return {value: int(count) for value, count in found}


def test_each_facet_counts_under_the_other_filters_with_a_status_and_an_outcome_chosen(
    user_client,
) -> None:
    def flagged(count: int, flags: dict[str, bool], **fields: str) -> None:
        # as the pipeline stores them (a run without decisions would be restated to none)
        ids = [run.pk for run in runs(count, **fields)]
        Run.objects.filter(pk__in=ids).update(**flags)

    flagged(2, {"fallback_used": True}, outcome="success")
    flagged(1, {"dns_failed": True}, outcome="error")
    flagged(1, {"fallback_used": True}, outcome="error", channel="slack")
    runs(1, outcome="success")
    html = user_client.get("/decisions/?outcome=error&status=fallback").content.decode()
    assert len(run_ids(html)) == 1
    # The statuses among the errors (the status filter itself left out)…
    statuses = facet(html, "status")
    assert (statuses["fallback"], statuses["dns-failure"], statuses["media"]) == (1, 1, 0)
    # …the outcomes among the fallbacks (the outcome filter left out)…
    assert facet(html, "outcome") == {
        **dict.fromkeys(Run.Outcome.values, 0),
        "success": 2,
        "error": 1,
    }
    # …and the channels under both.
    assert facet(html, "channel") == {"slack": 1}
