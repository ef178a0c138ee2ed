"""History friction: result count, facets, case-insensitive channel, session key contains,
date errors marked on their field, until before since refused, drill-downs keep the period."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from enrichment.models import Attempt, Run, UrlDecision
from enrichment.selectors import history_page

pytestmark = pytest.mark.django_db


def make(count: int, **fields) -> None:
    now = timezone.now()
    Run.objects.bulk_create(
        Run(created_at=now - timedelta(minutes=i + 1), **fields) for i in range(count)
    )


FACET_OF = {"filter-outcome": "outcome", "filter-chat-type": "chatType", "channel": "channel"}


def facet_block(html: str, name: str) -> str:
    return re.search(
        rf'<fieldset class="facet" id="facet-{name}">.*?</fieldset>', html, re.S
    ).group(0)


def option(html: str, select_id: str, value: str) -> str:
    """A facet's choice as "value (count)", read from its checkbox in the sidebar."""
    block = facet_block(html, FACET_OF.get(select_id, select_id))
    found = re.search(
        rf'value="{re.escape(value)}"[^>]*>\s*<span class="facet-value">([^<]*)</span>'
        r'(?: <span class="facet-count">(\d+)</span>)?',
        block,
    )
    return f"{found.group(1)} ({found.group(2)})" if found.group(2) else found.group(1)


def test_result_count_is_exact_below_the_cap(user_client) -> None:
    make(3, outcome="success", channel="slack")
    make(2, outcome="skipped", channel="slack")
    html = user_client.get("/decisions/?outcome=success").content.decode()
    assert re.search(r'id="result-count"[^>]*>3 runs<', html)


def test_result_count_says_more_than_the_cap(user_client, monkeypatch) -> None:
    monkeypatch.setattr(history_page, "COUNT_CAP", 4)
    make(6, outcome="success")
    html = user_client.get("/decisions/?limit=2").content.decode()
    assert re.search(r'id="result-count" data-exact="false">more than 4 runs<', html)


def test_facets_count_each_choice_under_the_other_filters(user_client) -> None:
    make(3, outcome="success", channel="Slack", chat_type="group")
    make(2, outcome="success", channel="slack", chat_type="direct")
    make(4, outcome="skipped", channel="telegram", chat_type="group")
    html = user_client.get("/decisions/?outcome=success").content.decode()
    # Outcome counts ignore the outcome filter itself, so the other outcomes stay visible.
    assert option(html, "filter-outcome", "success") == "success (5)"
    assert option(html, "filter-outcome", "skipped") == "skipped (4)"
    assert option(html, "filter-outcome", "error") == "error (0)"
    # Chat types under outcome=success; channels grouped case-insensitively.
    assert option(html, "filter-chat-type", "group") == "group (3)"
    assert option(html, "filter-chat-type", "direct") == "direct (2)"
    assert option(html, "channel", "slack") == "slack (5)"
    assert "telegram" not in facet_block(html, "channel")


def test_facets_count_the_newest_runs_only_and_say_so(user_client, monkeypatch) -> None:
    # Facets group a bounded window of the newest matching runs (an index range at a
    # million runs, not three scans of the log); past the exact count the page says so.
    monkeypatch.setattr("enrichment.selectors.history_page.FACET_WINDOW", 3)
    monkeypatch.setattr("enrichment.selectors.history_page.COUNT_CAP", 4)
    now = timezone.now()
    Run.objects.bulk_create(
        [Run(created_at=now - timedelta(hours=1, minutes=i), outcome="skipped", channel="telegram")
         for i in range(3)]
        + [Run(created_at=now - timedelta(minutes=i), outcome="success", channel="slack")
           for i in range(3)]
    )  # fmt: skip
    html = user_client.get("/decisions/").content.decode()
    assert option(html, "filter-outcome", "success") == "success (3)"
    assert option(html, "filter-outcome", "skipped") == "skipped (0)"
    assert "telegram" not in facet_block(html, "channel")
    assert "choice counts: the latest 3 matching runs" in html
    # Under the exact count, no such note.
    html = user_client.get("/decisions/?outcome=success").content.decode()
    assert 'id="facet-window"' not in html


def test_channel_filter_ignores_case(user_client) -> None:
    make(2, outcome="success", channel="Slack")
    make(1, outcome="success", channel="slack")
    make(1, outcome="success", channel="telegram")
    response = user_client.get("/api/decisions?channel=SLACK")
    assert len(response.json()["items"]) == 3


@pytest.mark.parametrize(
    "query, expected",
    [
        ("sessionKey=agent:main", 2),
        ("sessionKey=slack", 0),
        ("sessionKey=slack&sessionMatch=contains", 2),
        ("sessionKey=SUPPORT:TELE&sessionMatch=contains", 1),
    ],
    ids=["prefix", "prefix-misses-middle", "contains", "contains-ignores-case"],
)
def test_session_key_prefix_or_contains(user_client, query, expected) -> None:
    make(1, session_key="agent:main:slack:dm:1")
    make(1, session_key="agent:main:slack:dm:2")
    make(1, session_key="agent:support:telegram:7")
    assert len(user_client.get("/api/decisions?" + query).json()["items"]) == expected


@pytest.mark.parametrize(
    "query, field, message",
    [
        ("since=yesterday", "since", "since: not an ISO 8601 date/time"),
        ("until=13/45/2026", "until", "until: not an ISO 8601 date/time"),
        (
            "since=2026-11-20T10:00&until=2026-11-19T10:00",
            "until",
            "until: must be later than since",
        ),
        ("sessionKey=ab&sessionMatch=contains", "session-key", "at least 3 characters"),
        ("sessionMatch=regex", None, "sessionMatch: one of prefix, contains, exact"),
    ],
    ids=["bad-since", "bad-until", "until-before-since", "short-contains", "bad-match"],
)
def test_bad_filters_are_400_and_mark_their_field(user_client, query, field, message) -> None:
    response = user_client.get("/decisions/?" + query)
    html = response.content.decode()
    assert response.status_code == 400
    assert message in html
    if field:
        assert re.search(rf'id="filter-{field}"[^>]*aria-invalid="true"', html), field
    api = user_client.get("/api/decisions?" + query)
    assert api.status_code in (400, 422) and message.split(":")[0] in api.content.decode()


def test_session_match_is_left_out_of_links_when_it_is_the_default(user_client) -> None:
    make(1, session_key="agent:main:1", outcome="success")
    html = user_client.get("/decisions/?sessionKey=agent&sessionMatch=prefix").content.decode()
    link = re.search(r'href="(/decisions/\d+/\?[^"]*)"', html).group(1)
    assert "sessionMatch" not in link and "sessionKey=agent" in link


def test_failing_command_filter_finds_runs_where_it_failed(user_client) -> None:
    run = Run.objects.create(outcome="skipped")
    row = UrlDecision.objects.create(run=run, position=0, url="https://a.example/")
    Attempt.objects.create(url_decision=row, position=0, command="flaky-cli", outcome="failed")
    other = Run.objects.create(outcome="success")
    row = UrlDecision.objects.create(run=other, position=0, url="https://b.example/")
    Attempt.objects.create(url_decision=row, position=0, command="flaky-cli", outcome="success")
    items = user_client.get("/api/decisions?command=flaky-cli").json()["items"]
    assert [item["runId"] for item in items] == [run.pk]


def test_overview_drill_downs_keep_the_period(user_client) -> None:
    make(2, outcome="success")
    Run.objects.create(outcome="success", created_at=timezone.now() - timedelta(days=3))
    html = user_client.get("/?period=24h").content.decode()
    link = re.search(r'href="(/decisions/\?outcome=success&amp;since=[^"]+)"', html).group(1)
    history = user_client.get(link.replace("&amp;", "&"))
    # "Success 2" in the last 24 h opens those 2, not the 3 of all time.
    assert re.search(r'id="result-count"[^>]*>2 runs<', history.content.decode())


def test_chart_bars_failing_clis_and_blocked_hosts_are_links(user_client) -> None:
    run = Run.objects.create(outcome="skipped")
    row = UrlDecision.objects.create(
        run=run, position=0, url="http://10.0.0.5/x", blocked=True, reason="private"
    )
    Attempt.objects.create(url_decision=row, position=0, command="ssrf", outcome="skipped")
    ok_row = UrlDecision.objects.create(run=run, position=1, url="https://a.example/")
    Attempt.objects.create(url_decision=ok_row, position=0, command="flaky-cli", outcome="failed")
    html = user_client.get("/?period=7d").content.decode()
    bars = re.findall(r'<a class="chart-bar" href="([^"]+)"', html)
    assert len(bars) == 7 and all("since=" in bar and "until=" in bar for bar in bars)
    last_bar = bars[-1].replace("&amp;", "&")
    assert run.pk in {
        item["runId"]
        for item in user_client.get("/api/decisions" + last_bar[len("/decisions/") :]).json()[
            "items"
        ]
    }
    assert re.search(r'href="/decisions/\?command=flaky-cli&amp;since=[^"]+"><code>flaky-cli', html)
    assert re.search(r'href="/decisions/\?url=10.0.0.5&amp;since=[^"]+"><code>10.0.0.5', html)


def test_explain_on_a_scope_deny_lists_no_cli_entries(user_client) -> None:
    from enrichment.config.changes import config_replace
    from tests.enrichment.conftest import summarizer_config

    document = summarizer_config()
    document["tools"]["links"]["scope"] = {
        "default": "allow",
        "rules": [{"action": "deny", "match": {"channel": "telegram"}}],
    }
    config_replace(document=document)
    html = user_client.get(
        "/explain/?message=see+http://127.0.0.1/a&channel=telegram&dns=off"
    ).content.decode()
    assert "The scope denies this message" in html
    assert "Not fetched: the scope denies this message (global rule 1)" in html
    assert "CLI entries, tried in order" not in html


def test_every_run_links_to_its_session(user_client) -> None:
    make(2, session_key="agent:main:slack:dm:1")
    make(1, session_key="agent:main:slack:dm:10")  # a longer key with the same prefix
    run = Run.objects.filter(session_key="agent:main:slack:dm:1").first()
    page = user_client.get(f"/decisions/{run.pk}/").content.decode()
    link = re.search(r'id="session-runs" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert link == "/decisions/?sessionKey=agent%3Amain%3Aslack%3Adm%3A1&sessionMatch=exact"
    session = user_client.get(link).content.decode()
    assert re.search(r'id="result-count"[^>]*>2 runs<', session)


def test_facets_under_two_chosen_filters_each_ignore_only_their_own(user_client) -> None:
    make(2, outcome="success", channel="slack", chat_type="group")
    make(1, outcome="error", channel="slack", chat_type="direct")
    make(3, outcome="success", channel="Telegram", chat_type="direct")
    html = user_client.get("/decisions/?outcome=success&channel=slack").content.decode()
    # Outcomes under channel=slack, channels under outcome=success, chat types under both.
    assert option(html, "filter-outcome", "success") == "success (2)"
    assert option(html, "filter-outcome", "error") == "error (1)"
    assert option(html, "channel", "telegram") == "telegram (3)"
    assert option(html, "channel", "slack") == "slack (2)"
    assert option(html, "filter-chat-type", "group") == "group (2)"
    assert option(html, "filter-chat-type", "direct") == "direct (0)"
    # With none of the three chosen, they share one grouping: the same counts from one query.
    html = user_client.get("/decisions/").content.decode()
    assert option(html, "filter-outcome", "success") == "success (5)"
    assert option(html, "filter-chat-type", "direct") == "direct (4)"
    assert option(html, "channel", "telegram") == "telegram (3)"


def test_counts_past_their_time_budget_leave_the_rows_and_say_why(user_client, monkeypatch) -> None:
    # At millions of runs a filter the indexes cannot narrow may make the count and the
    # facets walk much of the log; past their budget (common.bounded) the page
    # still lists the rows, gives a lower bound for the count and the choices without counts.
    make(5, outcome="success", channel="slack")
    monkeypatch.setattr("enrichment.selectors.history_page.within", lambda budget, read: None)
    response = user_client.get("/decisions/?limit=2")
    html = response.content.decode()
    assert response.status_code == 200
    assert len(set(re.findall(r'href="/decisions/(\d+)/"', html))) == 2
    assert re.search(r'id="result-count" data-exact="false">more than 2 runs<', html)
    assert 'id="counts-skipped"' in html and "counting took too long" in html
    assert option(html, "filter-outcome", "success") == "success"  # no count beside it
    # A first page that is also the last one knows its count from its rows.
    html = user_client.get("/decisions/").content.decode()
    assert re.search(r'id="result-count" data-exact="true">5 runs<', html)


def test_a_duration_chart_past_what_the_budget_left_says_so(user_client, monkeypatch) -> None:
    # The count and the facets fitted their budget, the chart's read did not: the page says
    # why the chart is missing instead of leaving its place empty.
    make(5, outcome="success", duration_ms=120)
    reads = []

    def third_runs_out(budget, read):
        reads.append(read)
        return read() if len(reads) < 3 else None

    monkeypatch.setattr("enrichment.selectors.history_page.within", third_runs_out)
    html = user_client.get("/decisions/?limit=2").content.decode()
    assert len(reads) == 3  # the count, the facets, the chart
    assert (
        'id="counts-skipped"' not in html
        and option(html, "filter-outcome", "success") == "success (5)"
    )
    assert 'id="durations-skipped"' in html and "chart took too long" in html
    assert 'id="duration-p50"' not in html
    # Within its budget the chart is drawn and no note is shown.
    monkeypatch.setattr("enrichment.selectors.history_page.within", lambda budget, read: read())
    html = user_client.get("/decisions/?limit=2").content.decode()
    assert re.search(r'id="duration-p50">120 ms<', html) and 'id="durations-skipped"' not in html
    # Nothing matches: no chart and no note (the empty state speaks).
    html = user_client.get("/decisions/?outcome=error").content.decode()
    assert 'id="durations"' not in html


def test_a_page_holding_every_match_is_its_own_count(user_client, monkeypatch) -> None:
    make(3, outcome="success")

    def no_count(filters):
        raise AssertionError("the count was read although the rows hold every match")

    monkeypatch.setattr(history_page, "result_count", no_count)
    html = user_client.get("/decisions/").content.decode()
    assert re.search(r'id="result-count" data-exact="true">3 runs<', html)
    assert option(html, "filter-outcome", "success") == "success (3)"
    # A later page does not know what came before it: counted as before (and refused here).
    with pytest.raises(AssertionError, match="the count was read"):
        user_client.get("/decisions/?limit=2&outcome=success&cursor=" + _second_page_cursor())


def _second_page_cursor() -> str:
    from enrichment.selectors import HistoryFilters, decision_list

    page = decision_list(filters=HistoryFilters.from_params({}), cursor=None, limit=2)
    return str(page.next_cursor)


@pytest.mark.parametrize("budgeted", [True, False], ids=["postgresql", "sqlite"])
def test_rows_slower_than_the_budget_skip_the_count_where_reads_are_budgeted(
    user_client, monkeypatch, settings, budgeted
) -> None:
    """A filter whose rows alone took longer than the count budget (PostgreSQL) does not
    start the count, which reads past the same runs to reach its cap: the page answers at
    once with a lower bound and says why. Without budgets (SQLite) everything is counted."""
    make(5, outcome="success")
    settings.HISTORY_COUNTS_BUDGET_MS = 1
    listed = history_page.decision_list
    counted = []

    def slow_rows(**kwargs):
        time.sleep(0.005)  # longer than the 1 ms budget, whatever the machine
        return listed(**kwargs)

    def counting(filters):
        counted.append(filters)
        return history_page.ResultCount(5, exact=True)

    monkeypatch.setattr(history_page, "decision_list", slow_rows)
    monkeypatch.setattr(history_page, "result_count", counting)
    monkeypatch.setattr(history_page, "budgeted", lambda: budgeted)
    monkeypatch.setattr(history_page, "within", lambda budget, read: read())
    html = user_client.get("/decisions/?limit=2").content.decode()
    if budgeted:
        assert counted == []
        assert re.search(r'id="result-count" data-exact="false">more than 2 runs<', html)
        assert 'id="counts-skipped"' in html and "counting took too long" in html
    else:
        assert len(counted) == 1
        assert re.search(r'id="result-count" data-exact="true">5 runs<', html)
        assert 'id="counts-skipped"' not in html
