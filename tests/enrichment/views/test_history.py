"""Dashboard pages of the enrichment area: overview, history, run detail, explain."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.utils import timezone

from enrichment.config.changes import config_replace
from enrichment.config.store import config_document
from enrichment.models import Attempt, Run, UrlDecision
from enrichment.selectors import stats, text_search
from tests.enrichment.conftest import summarizer_config
from tests.enrichment.stored import restate

pytestmark = pytest.mark.django_db

ENVELOPE = "\n\n[Link: https://example.com/a]\nSummary of https://example.com/a"


def make_run(
    *,
    urls: int = 1,
    attempts: int = 2,
    created_at: datetime | None = None,
    **fields: Any,
) -> Run:
    """A finished run with ``urls`` URL decisions of ``attempts`` attempts each."""
    values: dict[str, Any] = {
        "channel": "telegram",
        "chat_type": "group",
        "session_key": "agent:main:telegram:group:42",
        "original_body": "  see https://example.com/a  ",
        "enriched_body": "see https://example.com/a" + ENVELOPE,
        "outcome": "success",
        "duration_ms": 120,
        "url_count": urls,
        **fields,
    }
    run = Run.objects.create(created_at=created_at or timezone.now(), **values)
    for position in range(urls):
        row = UrlDecision.objects.create(
            run=run,
            position=position,
            url=f"https://example.com/{chr(97 + position % 26)}{position}",
            addresses=["93.184.216.34"],
            chosen_position=attempts - 1 if attempts else None,
            summary="Summary text",
        )
        Attempt.objects.bulk_create(
            Attempt(
                url_decision=row,
                position=index,
                command="summarize" if index else "primary-cli",
                argv=["summarize", "--url", row.url],
                outcome="success" if index == attempts - 1 else "failed",
                reason="" if index == attempts - 1 else "exit code 3",
                exit_code=0 if index == attempts - 1 else 3,
                duration_ms=40,
                stderr_tail="" if index == attempts - 1 else "boom: upstream said no",
            )
            for index in range(attempts)
        )
    restate(run)
    return run


def make_runs(count: int, **fields: Any) -> list[Run]:
    start = timezone.now() - timedelta(minutes=count)
    return [make_run(created_at=start + timedelta(minutes=i), **fields) for i in range(count)]


def run_ids(html: str) -> list[int]:
    """Run ids linked from the history table, in page order."""
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in html else ""
    return [int(value) for value in re.findall(r'href="/decisions/(\d+)/', body)]


def link_href(html: str, element_id: str) -> str | None:
    match = re.search(rf'id="{element_id}"[^>]*href="([^"]+)"', html)
    return match.group(1).replace("&amp;", "&") if match else None


# --- access ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/", "/decisions/", "/decisions/1/", "/explain/?message=x"], ids=str
)
def test_pages_require_login(client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_staff_links_hidden_for_non_staff(user_client) -> None:
    run = make_run(matched_rule=0)
    for path in ("/", f"/decisions/{run.pk}/", "/explain/?message=http://10.0.0.5/&dns=off"):
        html = user_client.get(path).content.decode()
        assert "/admin/" not in html, path


def test_staff_sees_admin_links(staff_client) -> None:
    run = make_run(matched_rule=0)
    detail = staff_client.get(f"/decisions/{run.pk}/").content.decode()
    assert 'class="staff-link" href="/admin/enrichment/enrichmentconfig/"' in detail
    explain = staff_client.get("/explain/").content.decode()
    assert "/admin/enrichment/enrichmentconfig/" in explain


def test_navigation_lists_history_and_explain(user_client) -> None:
    html = user_client.get("/").content.decode()
    assert 'href="/decisions/"' in html and 'href="/explain/"' in html


# --- overview ----------------------------------------------------------------------------


def test_overview_empty_state(user_client) -> None:
    html = user_client.get("/").content.decode()
    assert "No enrichment runs yet" in html
    assert "No runs in this period." in html
    assert 'id="live-feed"' in html and "js/live.js" in html
    assert 'id="enrich-form"' in html and "js/enrich-form.js" in html


def test_overview_totals_chart_and_tables(user_client) -> None:
    # All successes in the current clock hour, whatever minute the suite runs at.
    hour_start = timezone.now().replace(minute=0, second=0, microsecond=0)
    for second in range(3):
        make_run(created_at=hour_start + timedelta(seconds=second))
    make_run(outcome="error", urls=0, attempts=0)
    make_run(created_at=timezone.now() - timedelta(days=3), outcome="no-links", urls=0)
    blocked = make_run(outcome="skipped", urls=0)
    UrlDecision.objects.create(
        run=blocked, position=0, url="http://10.0.0.5/x", blocked=True, reason="private"
    )
    UrlDecision.objects.create(
        run=blocked, position=1, url="http://10.0.0.5/y", blocked=True, reason="private"
    )

    html = user_client.get("/").content.decode()
    assert re.search(r'id="total-runs">5<', html)  # the 3-day-old run is outside 24 h
    assert html.count('class="chart-success"') == 1  # all successes fall in one hour bar
    assert '<code>10.0.0.5</code></a></td><td class="num">2<' in html
    assert '<code>primary-cli</code></a></td><td class="num">3<' in html
    assert html.count('href="/decisions/') >= 6

    week = user_client.get("/?period=7d").content.decode()
    assert re.search(r'id="total-runs">6<', week)
    assert 'aria-current="true">Last 7 days' in week


def test_unknown_period_falls_back_to_24_hours() -> None:
    assert stats.period_for("1y").key == "24h"
    assert stats.period_for(None).key == "24h"


def test_chart_buckets_cover_the_period_and_stack() -> None:
    now = datetime(2026, 11, 22, 10, 20, tzinfo=UTC)
    make_run(created_at=now - timedelta(minutes=5))
    make_run(created_at=now - timedelta(minutes=10), outcome="error")
    make_run(created_at=now - timedelta(hours=2))
    make_run(created_at=now - timedelta(days=2))  # outside the 24 h window

    chart = stats.outcome_chart(period=stats.PERIODS["24h"], now=now)
    assert len(chart.bars) == 24
    assert chart.bars[0].start == datetime(2026, 11, 21, 11, tzinfo=UTC)
    assert chart.bars[-1].start == datetime(2026, 11, 22, 10, tzinfo=UTC)
    assert chart.peak == 2
    last = chart.bars[-1]
    assert [(s.outcome, s.count) for s in last.segments] == [("success", 1), ("error", 1)]
    # A full bar reaches the top of the plot; stacked segments do not overlap.
    assert last.segments[-1].y == pytest.approx(0, abs=0.01)
    assert last.segments[0].y == pytest.approx(last.segments[1].y + last.segments[1].height)
    assert chart.bars[-3].total == 1 and chart.bars[-2].total == 0

    days = stats.outcome_chart(period=stats.PERIODS["7d"], now=now)
    assert len(days.bars) == 7 and days.bars[-1].total == 3 and days.bars[-3].total == 1


def test_overview_queries_do_not_grow_with_runs(user_client, django_assert_num_queries) -> None:
    make_runs(2)
    user_client.get("/")  # warm the session
    # session, user, totals, chart, 3 tops (failing, blocked, DNS failures), the failing
    # commands' problems, recent runs (their derived statuses on the rows), the retention card's
    # oldest run and last pass (runs kept forever: no outcome is ever due), and on PostgreSQL
    # its storage line (one catalog query: partitioned or not, and the months)
    expected = 11 + (connection.vendor == "postgresql")
    with django_assert_num_queries(expected):
        user_client.get("/")
    make_runs(20)
    with django_assert_num_queries(expected):
        user_client.get("/")


# --- history -----------------------------------------------------------------------------


def test_history_lists_runs_newest_first(user_client) -> None:
    runs = make_runs(3)
    response = user_client.get("/decisions/")
    html = response.content.decode()
    assert response.status_code == 200
    assert run_ids(html) == [run.pk for run in reversed(runs)]
    for header in ("Outcome", "Channel", "Chat type", "Session key"):
        assert f'scope="col">{header}<' in html
    for header in ("URLs", "Duration", "Time"):  # sortable: the header is a link
        assert re.search(rf'<th scope="col"[^>]*aria-sort="[a-z]+"><a [^>]*>{header}[ <]', html)
    assert "120 ms" in html
    assert 'href="/api/decisions/export?format=csv"' in html
    assert 'href="/api/decisions/export?format=json"' in html


def test_history_empty_states(user_client) -> None:
    assert "No enrichment runs yet" in user_client.get("/decisions/").content.decode()
    make_run()
    filtered = user_client.get("/decisions/?channel=nowhere").content.decode()
    assert "No runs match these filters" in filtered


FILTER_CASES = [
    ("outcome=error", "error-run"),
    ("channel=discord", "discord-run"),
    ("chatType=direct", "discord-run"),
    ("sessionKey=agent:side", "side-run"),
    ("url=private.example", "blocked-url-run"),
    ("q=needle", "needle-run"),
]


@pytest.mark.parametrize("query,expected", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_history_filters(user_client, query: str, expected: str) -> None:
    named = {
        "plain": make_run(),
        "error-run": make_run(outcome="error"),
        "discord-run": make_run(channel="discord", chat_type="direct"),
        "side-run": make_run(session_key="agent:side:1"),
        "blocked-url-run": make_run(urls=0),
        "needle-run": make_run(original_body="a needle in here"),
    }
    UrlDecision.objects.create(
        run=named["blocked-url-run"], position=0, url="http://private.example/", blocked=True
    )
    html = user_client.get(f"/decisions/?{query}").content.decode()
    assert run_ids(html) == [named[expected].pk]
    # The filter is kept in the form, the run links and the export links.
    key, value = query.split("=")
    assert f"/decisions/{named[expected].pk}/?{key}=" in html
    assert f"format=csv&amp;{key}=" in html


def test_history_date_range(user_client) -> None:
    now = timezone.now()
    old = make_run(created_at=now - timedelta(days=3))
    mid = make_run(created_at=now - timedelta(days=1))
    make_run(created_at=now)
    since = (now - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    until = (now - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")
    html = user_client.get(f"/decisions/?since={since}&until={until}").content.decode()
    assert run_ids(html) == [mid.pk]
    assert f'value="{since}"' in html  # shown back in the datetime-local input
    assert old.pk not in run_ids(html)


INVALID_FILTERS = [
    ("outcome=nope", "outcome: unknown outcome"),
    ("since=yesterday", "since: not an ISO 8601 date/time"),
    ("until=2026-13-45", "until: not an ISO 8601 date/time"),
    ("cursor=%25%25%25", "cursor: not a cursor"),
    ("limit=many", "limit: not a whole number"),
    ("limit=0", "limit: must be between 1 and 200"),
    ("channel=" + "x" * 501, "channel: filter longer than 500 characters"),
]


@pytest.mark.parametrize("query,message", INVALID_FILTERS, ids=[c[1] for c in INVALID_FILTERS])
def test_history_invalid_filters_are_a_400_page(user_client, query: str, message: str) -> None:
    make_run()
    response = user_client.get(f"/decisions/?{query}")
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert 'id="filter-error"' in html
    assert run_ids(html) == []


def test_history_pages_older_newer_and_first(user_client) -> None:
    runs = list(reversed(make_runs(5, channel="slack")))  # newest first
    make_run(channel="other")
    first = user_client.get("/decisions/?channel=slack&limit=2").content.decode()
    assert run_ids(first) == [runs[0].pk, runs[1].pk]
    assert link_href(first, "page-newer") is None

    second_href = link_href(first, "page-older")
    assert second_href is not None and "channel=slack" in second_href
    second = user_client.get("/decisions/" + second_href).content.decode()
    assert run_ids(second) == [runs[2].pk, runs[3].pk]

    third = user_client.get("/decisions/" + link_href(second, "page-older")).content.decode()
    assert run_ids(third) == [runs[4].pk]
    assert link_href(third, "page-older") is None

    back = user_client.get("/decisions/" + link_href(third, "page-newer")).content.decode()
    assert run_ids(back) == [runs[2].pk, runs[3].pk]
    top = user_client.get("/decisions/" + link_href(back, "page-newer")).content.decode()
    assert run_ids(top) == [runs[0].pk, runs[1].pk]
    first_href = link_href(third, "page-first")
    assert parse_qs(urlsplit(first_href).query) == {"channel": ["slack"], "limit": ["2"]}


@pytest.mark.parametrize("count", [1, 30], ids=["1-run", "30-runs"])
def test_history_query_count_is_constant(
    user_client, django_assert_num_queries, monkeypatch, count
) -> None:
    # No sample of URLs (read once per text_search.URL_SAMPLE_SECONDS, not per page): a
    # rare fragment is listed whole, without the rarest trigrams' try first.
    monkeypatch.setattr(text_search, "url_sample", lambda using="default": [])
    make_runs(count, urls=3, attempts=2)
    # A URL fragment's page shows its rows first: session, user, saved views, then on
    # SQLite one page of runs (their derived statuses are on the rows). On PostgreSQL the
    # fragment is planned first (text_search.newest_first: the table size, an estimate, the
    # runs of a rare fragment in a savepoint of five statements), then the page. On
    # partitioned storage the fragment is listed for the newest run's month first (a probe
    # for that run), and, the page not being full, then for every older month.
    postgres = connection.vendor == "postgresql"
    rows_queries = 3 + 8 if postgres else 3 + 1
    if os.environ.get("CONTROLUI_TEST_STORAGE") == "partitioned":
        rows_queries += 1 + 6
    with django_assert_num_queries(rows_queries):
        response = user_client.get("/decisions/?url=example.com")
    html = response.content.decode()
    assert len(run_ids(html)) == count
    assert 'class="facet-count"' not in html and 'id="counts-pending"' in html
    # Its count, facets and durations: the same page again with counts=1. On SQLite the page
    # (a page holding every match is its own count), one facet grouping (no facet and no
    # status is chosen, so the three facets and the status counts share their filters) and
    # the durations; on PostgreSQL, the fragment being rare, its runs are read once for the
    # count, facets and durations (history_page._from_matched), then the page's rows by id.
    with django_assert_num_queries(3 + 7 + 2 if postgres else 3 + 3):
        counted = user_client.get("/decisions/?url=example.com&counts=1").content.decode()
    assert len(run_ids(counted)) == count
    assert re.search(rf'id="result-count" data-exact="true">{count} runs?<', counted)


# --- run detail --------------------------------------------------------------------------


def test_detail_shows_bodies_urls_and_attempts(user_client) -> None:
    run = make_run()
    html = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert '<pre id="body-original">  see https://example.com/a  </pre>' in html
    assert 'see https://example.com/a<mark class="diff-added"' in html
    assert "[Link: https://example.com/a]" in html.split("<mark", 1)[1]
    assert "<code>example.com</code>" in html
    assert "<code>93.184.216.34</code>" in html
    assert html.count('class="outcome-failed"') == 1
    assert 'class="outcome-success chosen"' in html
    assert "exit 3 · 40 ms" in html
    assert "boom: upstream said no" in html
    assert '<code class="argv">summarize --url https://example.com/a0</code>' in html


def test_detail_shows_media_decisions_with_status_line_and_timeline(user_client) -> None:
    failed = {
        "type": "cli",
        "outcome": "failed",
        "argv": ["describe", "--in", "/tmp/m/photo.jpg"],
        "exitCode": 2,
        "durationMs": 31,
        "reason": "exit code 2",
        "stderrTail": "<script>alert(1)</script>",
    }
    chosen = {"type": "provider", "outcome": "success", "provider": "openai", "model": "gpt-4o"}
    media = [
        {
            "capability": "image",
            "outcome": "success",
            "attachments": [{"attachmentIndex": 0, "attempts": [failed, chosen], "chosen": chosen}],
        },
        {"capability": "audio", "outcome": "scope-deny", "attachments": [], "matchedRule": 1},
        {
            "capability": "file",
            "outcome": "success",
            "attachments": [],
            "files": [
                {"attachmentIndex": 1, "name": "notes.csv", "mime": "text/csv", "skipped": None},
                {
                    "attachmentIndex": 2,
                    "name": "blob.bin",
                    "mime": "application/octet-stream",
                    "skipped": "binary",
                },
            ],
        },
        {"legacy": "shape", "bytes": 2048},
    ]
    html = user_client.get(f"/decisions/{make_run(media=media).pk}/").content.decode()
    assert (
        '<p class="card media-status" id="media-status">📎 Media: image ok (openai/gpt-4o)' in html
    )
    assert "audio denied</p>" in html
    assert (
        '<code class="media-summary">image: success (1/1) via openai/gpt-4o reason=exit code 2'
        in html
    )
    assert "audio: scope-deny</code> · scope rule 2" in html
    assert '<code class="argv">describe --in /tmp/m/photo.jpg</code>' in html
    assert "exit 2 · 31 ms" in html
    assert 'class="outcome-success chosen"' in html and "<code>openai/gpt-4o</code>" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html
    assert "<td>notes.csv</td>" in html and "appended</span>" in html
    assert '<span class="badge badge-skipped">skipped</span> binary' in html
    assert "<dt>legacy</dt><dd>shape</dd>" in html and "<dt>bytes</dt><dd>2048</dd>" in html


def test_detail_without_media_has_no_media_section(user_client) -> None:
    html = user_client.get(f"/decisions/{make_run().pk}/").content.decode()
    assert "Media decisions" not in html and "media-status" not in html


def test_detail_blocked_url_shows_reason(user_client) -> None:
    run = make_run(urls=0, outcome="skipped", enriched_body="")
    UrlDecision.objects.create(
        run=run,
        position=0,
        url="http://10.0.0.5/admin",
        blocked=True,
        reason="private address 10.0.0.5",
        addresses=["10.0.0.5"],
    )
    html = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert "blocked: private address 10.0.0.5" in html
    assert "<code>10.0.0.5</code>" in html
    assert "No enriched body (skipped)." in html


def test_detail_missing_run_is_404(user_client) -> None:
    assert user_client.get("/decisions/999999/").status_code == 404


def test_detail_invalid_filters_are_400(user_client) -> None:
    run = make_run()
    response = user_client.get(f"/decisions/{run.pk}/?outcome=bogus")
    assert response.status_code == 400
    assert "outcome: unknown outcome" in response.content.decode()


def test_detail_prev_next_respect_filters(user_client) -> None:
    older, _other, middle, _other2, newer = make_runs(5)
    for run in (_other, _other2):
        Run.objects.filter(pk=run.pk).update(channel="discord")
    html = user_client.get(f"/decisions/{middle.pk}/?channel=telegram").content.decode()
    assert link_href(html, "run-newer") == f"/decisions/{newer.pk}/?channel=telegram"
    assert link_href(html, "run-older") == f"/decisions/{older.pk}/?channel=telegram"
    plain = user_client.get(f"/decisions/{middle.pk}/").content.decode()
    assert link_href(plain, "run-newer") == f"/decisions/{_other2.pk}/"


def test_detail_matched_rule_from_the_snapshot(user_client) -> None:
    snapshot = summarizer_config(
        scope={
            "default": "deny",
            "rules": [
                {"action": "deny", "match": {"channel": "discord"}},
                {"action": "allow", "match": {"keyPrefix": "agent:main:"}},
            ],
        }
    )
    run = make_run(matched_rule=1, config_snapshot=snapshot)
    html = user_client.get(f"/decisions/{run.pk}/").content.decode()
    matched = html.split('id="matched-rule"', 1)[1].split("</dd>", 1)[0]
    assert "global rule 2" in matched and "keyPrefix=agent:main:" in matched and "allow" in matched
    default = make_run(matched_rule=None, outcome="scope-deny", config_snapshot=snapshot)
    html = user_client.get(f"/decisions/{default.pk}/").content.decode()
    assert 'by <span class="scope-origin">the global default</span>' in html


@pytest.mark.parametrize("urls", [1, 30], ids=["1-url", "30-urls"])
def test_detail_query_count_is_constant(user_client, django_assert_num_queries, urls) -> None:
    config_document()  # the stored config exists (a flushed database gets the default first)
    make_run()
    run = make_run(urls=urls, attempts=3)
    make_run()
    # session, user, run, URL decisions, attempts, newer, older, latest config version,
    # today's config to compare the snapshot with (config, scope rules, CLI entries, agents),
    # and the replies stored for the turn (the session's next run, its messages)
    with django_assert_num_queries(14):
        response = user_client.get(f"/decisions/{run.pk}/?channel=telegram")
    assert response.content.decode().count('class="card url-card"') == urls


# --- explain -----------------------------------------------------------------------------


def test_explain_first_visit_has_dns_on_and_focus(user_client) -> None:
    html = user_client.get("/explain/").content.decode()
    assert re.search(r'id="explain-dns" name="dns" value="on" checked', html)
    assert re.search(r'id="explain-message"[^>]*autofocus', html)
    assert 'label for="explain-message"' in html
    assert "Paste a message to explain" in html


def test_explain_private_url_is_blocked_with_reason(user_client, summarizer) -> None:
    html = user_client.get("/explain/?message=http://10.0.0.5/").content.decode()
    assert 'badge badge-blocked">blocked<' in html
    verdict = re.search(r'class="ssrf-verdict">([^<]+)<', html)
    assert verdict is not None and verdict.group(1).startswith("blocked: ")
    assert "private" in verdict.group(1)
    # Detection drops a literal private address, so a real run sees no links at all.
    assert 'id="explain-outcome">no-links<' in html
    assert "Links a run would ignore" in html
    assert "argv:" not in html


def test_explain_allowed_url_shows_the_argv(user_client, summarizer, monkeypatch) -> None:
    monkeypatch.setattr("enrichment.resolver.resolve_host", lambda host: ["127.0.0.1"])
    message = "read http://127.0.0.1:9/page and http://169.254.169.254/latest"
    html = user_client.get("/explain/", {"message": message, "dns": "on"}).content.decode()
    assert 'id="explain-outcome">run<' in html
    assert '<code class="argv">http://127.0.0.1:9/page</code>' in html
    assert html.count('badge badge-blocked">blocked<') == 1
    assert "maxLinks" in html or "models" in html


def test_explain_dns_off_does_not_resolve(user_client, summarizer, monkeypatch) -> None:
    def fail(host: str) -> list[str]:
        raise AssertionError("resolved although DNS was off")

    monkeypatch.setattr("enrichment.resolver.resolve_host", fail)
    response = user_client.get("/explain/?message=https://docs.example/x&dns=off&dns=off")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="explain-dns" name="dns" value="on">' in html  # shown unchecked
    assert "not resolved" in html


def test_explain_resolves_when_checked(user_client, summarizer, monkeypatch) -> None:
    monkeypatch.setattr("enrichment.resolver.resolve_host", lambda host: ["10.1.2.3"])
    html = user_client.get("/explain/?message=https://docs.example/x&dns=off&dns=on").content
    text = html.decode()
    assert "<code>10.1.2.3</code>" in text and 'badge badge-blocked">blocked<' in text
    assert 'id="explain-outcome">skipped<' in text  # detected, then blocked by its DNS answer


def test_explain_scope_rule_and_agent_override(user_client) -> None:
    document = summarizer_config(
        scope={"default": "allow", "rules": [{"action": "deny", "match": {"channel": "discord"}}]}
    )
    document["agents"] = {"list": [{"id": "quiet", "tools": {"links": {"maxLinks": 1}}}]}
    config_replace(document=document)
    html = user_client.get(
        "/explain/", {"message": "http://127.0.0.1/a", "channel": "discord", "agentId": "quiet"}
    ).content.decode()
    assert 'id="explain-outcome">scope-deny<' in html
    scope = html.split('id="explain-scope"', 1)[1].split("</dd>", 1)[0]
    assert "deny" in scope and 'by <span class="scope-origin">global rule 1</span>' in scope
    assert 'class="matched" aria-current="true"' in html
    assert "&quot;maxLinks&quot;: 1" in html


def test_explain_too_long_message_is_400(user_client) -> None:
    response = user_client.get("/explain/", {"message": "x" * 20_001})
    assert response.status_code == 400
    assert "message: longer than 20000 characters" in response.content.decode()


@pytest.mark.django_db
def test_detail_of_a_disabled_run_does_not_claim_a_scope_decision(user_client) -> None:
    from enrichment.models import Run as RunModel

    run = RunModel.objects.create(outcome="disabled", original_body="http://example.com")
    page = user_client.get(f"/decisions/{run.pk}/").content.decode()
    assert "not checked (link understanding is off for this run)" in page
    assert "decided by the default" not in page


def test_chart_axis_is_evenly_spaced_in_whole_counts_and_labels_alternate() -> None:
    """The y labels are spread evenly beside the plot, so the gridlines must be too: with an
    odd peak the axis tops out one higher, and the middle gridline is a whole count."""
    now = datetime(2026, 11, 22, 10, 20, tzinfo=UTC)
    for _ in range(3):
        make_run(created_at=now - timedelta(minutes=5))
    chart = stats.outcome_chart(period=stats.PERIODS["24h"], now=now)
    assert chart.peak == 3
    assert [tick["value"] for tick in chart.y_ticks] == [4, 2, 0]
    assert [tick["y"] for tick in chart.y_ticks] == [0, stats.CHART_HEIGHT / 2, stats.CHART_HEIGHT]
    # The peak's bar reaches the gridline of its count, three quarters up.
    top = chart.bars[-1].segments[-1].y
    assert top == pytest.approx(stats.CHART_HEIGHT / 4, abs=0.01)
    # Every third hour is labelled; every other label may be left out on a phone.
    labelled = [bar for bar in chart.bars if bar.label]
    assert [bar.label for bar in labelled][:3] == ["11:00", "14:00", "17:00"]
    assert [bar.minor for bar in labelled] == [False, True] * 4
