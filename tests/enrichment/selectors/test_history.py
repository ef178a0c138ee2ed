"""Decision-log reads use a constant number of queries, whatever the number of rows."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from enrichment.models import Attempt, Run, UrlDecision
from enrichment.selectors import SORTS, HistoryFilters, decision_get, decision_list, text_search
from enrichment.selectors.records import decision_record

pytestmark = pytest.mark.django_db

URLS_PER_RUN = 3
ATTEMPTS_PER_URL = 2


def make_runs(count: int) -> list[Run]:
    """Runs with 3 URLs × 2 attempts each (a failed attempt, then the chosen one)."""
    now = timezone.now()
    runs = Run.objects.bulk_create(
        Run(
            created_at=now - timedelta(seconds=i),
            outcome="success",
            channel="telegram",
            session_key=f"agent:main:{i}",
            original_body="links",
            url_count=URLS_PER_RUN,
        )
        for i in range(count)
    )
    decisions = UrlDecision.objects.bulk_create(
        UrlDecision(run=run, position=p, url=f"https://example.com/{run.pk}/{p}", chosen_position=1)
        for run in runs
        for p in range(URLS_PER_RUN)
    )
    Attempt.objects.bulk_create(
        Attempt(
            url_decision=decision,
            position=a,
            command="summarize",
            argv=["summarize", decision.url],
            outcome="failed" if a == 0 else "success",
            exit_code=1 if a == 0 else 0,
        )
        for decision in decisions
        for a in range(ATTEMPTS_PER_URL)
    )
    return runs


def queries_for(action) -> tuple[int, object]:
    with CaptureQueriesContext(connection) as captured:
        result = action()
    return len(captured.captured_queries), result


@pytest.mark.parametrize(
    "filters",
    [
        HistoryFilters(),
        HistoryFilters(outcome="success", channel="telegram"),
        HistoryFilters(url="example.com", q="links", session_key="agent:main"),
    ],
    ids=["none", "outcome-channel", "url-text-prefix"],
)
def test_decision_list_query_count_is_constant(filters, monkeypatch) -> None:
    # No sample of URLs (read once per text_search.URL_SAMPLE_SECONDS, not per page): a
    # rare fragment is listed whole, without the rarest trigrams' try first.
    monkeypatch.setattr(text_search, "url_sample", lambda using="default": [])
    make_runs(1)
    few, page = queries_for(lambda: decision_list(filters=filters, limit=50))
    assert len(page.items) == 1
    make_runs(39)
    many, page = queries_for(lambda: decision_list(filters=filters, limit=50))
    assert len(page.items) == 40
    # The page alone: the derived statuses are on its rows. On PostgreSQL a word and a URL fragment are planned first (text_search.planned): the
    # table size, two estimates and, in one savepoint, the runs of each rare one.
    planning = 9 if filters.q and connection.vendor == "postgresql" else 0
    assert few == many == 1 + planning
    # Reading the summary fields of every item costs nothing more.
    extra, _ = queries_for(
        lambda: [(r.outcome, r.channel, r.url_count, r.duration_ms) for r in page.items]
    )
    assert extra == 0


def test_decision_list_next_page_costs_the_same() -> None:
    make_runs(40)
    first = decision_list(filters=HistoryFilters(), limit=15)
    assert first.next_cursor
    count, second = queries_for(
        lambda: decision_list(filters=HistoryFilters(), cursor=first.next_cursor, limit=15)
    )
    assert count == 1
    assert len(second.items) == 15
    assert not {r.pk for r in first.items} & {r.pk for r in second.items}


def test_decision_get_and_record_query_count_is_constant() -> None:
    (small,) = make_runs(1)
    few, record = queries_for(lambda: decision_record(decision_get(run_id=small.pk)))
    assert len(record["links"]["urls"]) == URLS_PER_RUN
    runs = make_runs(40)
    big = runs[-1]
    # A run with many more URLs and attempts than the first one.
    extra = UrlDecision.objects.bulk_create(
        UrlDecision(run=big, position=p, url=f"https://example.org/{p}")
        for p in range(URLS_PER_RUN, 20)
    )
    Attempt.objects.bulk_create(
        Attempt(url_decision=d, position=a, command="x", outcome="failed")
        for d in extra
        for a in range(4)
    )
    many, record = queries_for(lambda: decision_record(decision_get(run_id=big.pk)))
    assert few == many == 3
    urls = record["links"]["urls"]
    assert len(urls) == 20
    assert [len(url["attempts"]) for url in urls[:URLS_PER_RUN]] == [2, 2, 2]
    assert urls[0]["chosen"]["outcome"] == "success"
    assert urls[0]["attempts"][0]["exitCode"] == 1
    assert [url["url"] for url in urls[:2]] == [
        f"https://example.com/{big.pk}/0",
        f"https://example.com/{big.pk}/1",
    ]


@pytest.mark.parametrize("sort", list(SORTS), ids=list(SORTS))
def test_any_of_statuses_pages_the_same_runs_in_the_same_order_as_their_or(sort) -> None:
    # On PostgreSQL each status is read alone and the pages merged: a run with two of them
    # is listed once, ties on the sort key keep the id order, and paging goes through all.
    now = timezone.now()
    flags = [(True, False, False), (False, True, False), (True, True, False), (False, False, True)]
    Run.objects.bulk_create(
        Run(
            created_at=now - timedelta(minutes=i // 3),  # three runs a minute: ties on time
            outcome="skipped" if i % 4 else "success",
            duration_ms=None if i % 7 == 0 else 100 * (i % 5),
            url_count=i % 3,
            attempts_failed=flags[i % 5][0] if i % 5 < 4 else False,
            fallback_used=flags[i % 5][1] if i % 5 < 4 else False,
            dns_failed=flags[i % 5][2] if i % 5 < 4 else False,
        )
        for i in range(40)
    )
    filters = HistoryFilters(status="attempts-failed,fallback,dns-failure", sort=sort)
    ordering = SORTS[sort]
    expected = list(
        ordering.sorted(
            Run.objects.filter(Q(attempts_failed=True) | Q(fallback_used=True) | Q(dns_failed=True))
        ).values_list("pk", flat=True)
    )
    assert 20 < len(expected) < 40
    listed, cursor = [], None
    while True:
        page = decision_list(filters=filters, cursor=cursor, limit=4)
        listed += [run.pk for run in page.items]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert listed == expected
    outcome = replace(filters, outcome="skipped")
    assert [run.pk for run in decision_list(filters=outcome, limit=200).items] == [
        pk for pk in expected if Run.objects.get(pk=pk).outcome == "skipped"
    ]


def test_any_of_statuses_says_more_when_one_status_alone_fills_the_page() -> None:
    now = timezone.now()
    Run.objects.bulk_create(
        Run(created_at=now - timedelta(minutes=i), outcome="skipped", attempts_failed=True)
        for i in range(5)
    )
    filters = HistoryFilters(status="attempts-failed,dns-failure")
    first = decision_list(filters=filters, limit=2)
    assert len(first.items) == 2 and first.next_cursor
    rest = decision_list(filters=filters, cursor=first.next_cursor, limit=3)
    assert len(rest.items) == 3 and rest.next_cursor is None
