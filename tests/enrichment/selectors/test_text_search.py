"""The history's text filters on both databases: ``q`` (PostgreSQL's full-text search; a
substring on SQLite) and ``url`` (a fragment of three letters or digits or more, refused
shorter with the same message on the page, the API and the export).

Run this file with ``DATABASE_URL=postgres://…`` too: the PostgreSQL tests check the plans
(the GIN index of the stored ``body_search`` vector, the URL trigram index, no walk of the
history index for a rare word) and what the stored vector does with long bodies.
"""

from __future__ import annotations

import json
import os
import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from common import trigrams
from enrichment.models import Run, UrlDecision
from enrichment.selectors import HistoryFilters, decision_export_chunk, decision_list, text_search
from enrichment.selectors.history_page import history_page

pytestmark = pytest.mark.django_db

ON_POSTGRES = os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))
postgres_only = pytest.mark.skipif(not ON_POSTGRES, reason="needs DATABASE_URL=postgres://…")


def make_run(minutes_ago: int = 1, url: str | None = None, **fields: Any) -> Run:
    run = Run.objects.create(
        created_at=timezone.now() - timedelta(minutes=minutes_ago),
        outcome=fields.pop("outcome", "success"),
        channel="slack",
        **fields,
    )
    if url:
        UrlDecision.objects.create(run=run, position=0, url=url)
    return run


def api_ids(client: Any, **params: str) -> list[int]:
    response = client.get("/api/decisions", params)
    assert response.status_code == 200, response.content
    return [item["runId"] for item in response.json()["items"]]


def page_ids(client: Any, **params: str) -> list[int]:
    response = client.get("/decisions/", params)
    assert response.status_code == 200, response.content[:500]
    return [int(i) for i in re.findall(r'href="/decisions/(\d+)/', response.content.decode())]


# --- q: the same answers on both databases --------------------------------------------------


def test_q_finds_a_word_in_either_body_case_insensitively(user_client) -> None:
    deploy = make_run(3, original_body="can we Deploy tomorrow?")
    summary = make_run(
        2, original_body="see link", enriched_body="see link\n\n[Link]\nRollback plan"
    )
    make_run(1, original_body="nothing to see")
    assert api_ids(user_client, q="deploy") == [deploy.pk]
    assert api_ids(user_client, q="ROLLBACK") == [summary.pk]
    assert api_ids(user_client, q="rollback plan") == [summary.pk]
    assert api_ids(user_client, q="absent") == []
    assert set(page_ids(user_client, q="deploy")) == {deploy.pk}


def test_q_pages_newest_first_with_the_keyset_cursor(user_client) -> None:
    runs = [make_run(minutes, original_body=f"incident {minutes}") for minutes in range(1, 8)]
    make_run(0, original_body="unrelated")
    first = user_client.get("/api/decisions", {"q": "incident", "limit": 4}).json()
    second = user_client.get(
        "/api/decisions", {"q": "incident", "limit": 4, "cursor": first["nextCursor"]}
    ).json()
    ids = [item["runId"] for item in first["items"] + second["items"]]
    assert ids == [run.pk for run in runs]
    assert second["nextCursor"] is None


@pytest.mark.parametrize(
    "query",
    ["a & b | !c", "x:* <-> (y", "'quoted' \"double\"", "or", "-deploy", "a\\b", "ß𝒳 日本"],
)
def test_q_with_search_syntax_is_plain_text_never_an_error(user_client, query) -> None:
    make_run(original_body="plain words only")
    assert user_client.get("/api/decisions", {"q": query}).status_code == 200
    assert user_client.get("/decisions/", {"q": query}).status_code == 200


def test_q_matches_with_both_plans_the_same_runs_in_the_same_order(
    user_client, monkeypatch
) -> None:
    """Few matches are fetched and sorted, many are found walking the history: same rows."""
    common = [make_run(minutes, original_body=f"common word {minutes}") for minutes in range(1, 7)]
    rare = make_run(10, original_body="rare needle")
    monkeypatch.setattr(text_search, "RARE_MATCHES", 3)
    assert api_ids(user_client, q="common") == [run.pk for run in common]
    assert api_ids(user_client, q="needle") == [rare.pk]
    assert [run.pk for run in decision_export_chunk(filters=HistoryFilters(q="common"))] == [
        run.pk for run in common
    ]
    found = history_page(filters=HistoryFilters(q="common"), cursor=None, limit=50)
    assert (found.count.count, found.count.exact) == (6, True)
    assert [facet.count for facet in found.facets["outcome"] if facet.value == "success"] == [6]


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"q": "!!!"}, "q", "q: full-text search needs a word (letters or digits)"),
        ({"q": "_ -- _"}, "q", "q: full-text search needs a word (letters or digits)"),
        ({"q": "a\x00b"}, "q", "q: contains a NUL character"),
        ({"q": "w" * 501}, "q", "q: filter longer than 500 characters"),
        ({"url": "e"}, "url", "url: URL filter needs at least 3 characters"),
        ({"url": "ex"}, "url", "url: URL filter needs at least 3 characters"),
        ({"url": "://"}, "url", "url: URL filter needs 3 letters or digits in a row"),
        ({"url": "a/b.c"}, "url", "url: URL filter needs 3 letters or digits in a row"),
        ({"url": "a_b_c"}, "url", "url: URL filter needs 3 letters or digits in a row"),
        ({"url": "\x00ab"}, "url", "url: contains a NUL character"),
        ({"url": "x" * 501}, "url", "url: filter longer than 500 characters"),
    ],
    ids=[
        "q-punctuation",
        "q-underscores",
        "q-nul",
        "q-overlong",
        "url-1-char",
        "url-2-chars",
        "url-punctuation",
        "url-no-3-in-a-row",
        "url-underscores",
        "url-nul",
        "url-overlong",
    ],
)
def test_unsearchable_text_filters_are_refused_everywhere_naming_the_problem(
    user_client, params, field, message
) -> None:
    make_run(original_body="something", url="https://example.com/a")
    page = user_client.get("/decisions/", params)
    html = page.content.decode()
    assert page.status_code == 400
    assert message in html
    if "NUL" not in message:  # NUL is refused before any view, by the input guard
        assert re.search(rf'id="filter-{field}"[^>]*aria-invalid="true"', html), field
        assert 'class="card error-card"' in html
    for path in ("/api/decisions", "/api/decisions/export"):
        response = user_client.get(path, params)
        assert response.status_code == 422, path
        assert message in response.json()["detail"], path


# --- url: a fragment of three letters or digits or more -------------------------------------


def test_url_fragment_of_three_or_more_finds_its_runs(user_client) -> None:
    wiki = make_run(2, url="https://en.wikipedia.example/wiki/Gateway")
    docs = make_run(1, url="https://docs.example.com/guide?page=2")
    assert api_ids(user_client, url="wiki") == [wiki.pk]
    assert api_ids(user_client, url="example") == [docs.pk, wiki.pk]
    assert api_ids(user_client, url="?page=2") == [docs.pk]
    exported = decision_export_chunk(filters=HistoryFilters.from_params({"url": "docs."}))
    assert [run.pk for run in exported] == [docs.pk]


# --- each database's own behaviour -----------------------------------------------------------


@pytest.mark.skipif(ON_POSTGRES, reason="SQLite's substring search")
def test_on_sqlite_q_is_a_substring(user_client) -> None:
    run = make_run(original_body="deployment")
    assert api_ids(user_client, q="ploym") == [run.pk]


@postgres_only
def test_on_postgres_q_is_whole_words_in_any_order(user_client) -> None:
    run = make_run(original_body="why did the build fail after the deploy")
    assert api_ids(user_client, q="deploy build") == [run.pk]
    assert api_ids(user_client, q="deplo") == []  # whole words, not fragments
    assert api_ids(user_client, q="deploy missing") == []  # every word


@postgres_only
def test_on_postgres_the_vector_follows_updates_and_survives_huge_bodies(user_client) -> None:
    run = make_run(original_body="first", enriched_body="")
    Run.objects.filter(pk=run.pk).update(enriched_body="first\n\n[Link]\nsummarised")
    assert api_ids(user_client, q="summarised") == [run.pk]
    # More text than one tsvector holds (1 MB): the run is still stored; its first
    # 100,000 characters are searchable.
    words = " ".join(f"w{i}x" for i in range(120_000))
    huge = make_run(2, original_body=f"headline {words}")
    assert Run.objects.filter(pk=huge.pk).exists()
    assert api_ids(user_client, q="headline") == [huge.pk]


def explain(sql: str, params: Any) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


@postgres_only
def test_on_postgres_q_uses_the_gin_index_and_a_rare_word_never_walks_the_history(
    monkeypatch,
) -> None:
    for minutes in range(30):
        make_run(minutes, original_body=f"common text {minutes}")
    needle = make_run(40, original_body="rare needle")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE enrichment_run")
    matching = HistoryFilters(q="needle").apply(Run.objects.all())
    sql, params = matching.query.sql_with_params()
    with connection.cursor() as cursor:
        # 31 runs are read whole; at a million the GIN index is the way.
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = explain(sql, params)
        cursor.execute("SET LOCAL enable_seqscan TO DEFAULT")
    assert "run_body_search" in plan, plan
    runs = matching.history_order()[:51]
    # A rare word: its runs are listed once from the index, the page asks for those.
    with text_search.planned("needle") as rare:
        assert rare == {"q"}
        sql, params = runs.query.sql_with_params()
        assert "= ANY(" in sql and params[0] == [needle.pk]
        assert "run_history" not in explain(sql, params)
        assert [run.pk for run in decision_list(filters=HistoryFilters(q="needle")).items] == [
            needle.pk
        ]
    # A word with more runs than a rare one has: the ordinary condition.
    monkeypatch.setattr(text_search, "RARE_MATCHES", 5)
    with text_search.planned("common") as rare:
        assert rare == set()
        assert "@@ plainto_tsquery" in str(runs.query)
    with connection.cursor() as cursor:
        cursor.execute("SHOW enable_indexscan")
        assert cursor.fetchone()[0] == "on"


@postgres_only
def test_on_postgres_a_rare_url_fragment_is_listed_from_the_trigram_index() -> None:
    run = make_run(url="https://docs.example.com/guide")
    make_run(url="https://other.example.org/")
    fragment = UrlDecision.objects.filter(url__contains="docs.example")
    sql, params = fragment.query.sql_with_params()
    with connection.cursor() as cursor:
        # As ``planned`` lists a fragment's runs: no table scan, no walk of another index.
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off")
        plan = explain(sql, params)
        cursor.execute("SET LOCAL enable_seqscan TO DEFAULT; SET LOCAL enable_indexscan TO DEFAULT")
    assert "urldecision_url_trgm" in plan, plan
    with text_search.planned("", "docs.example") as rare:
        assert rare == {"url"}
        runs = HistoryFilters(url="docs.example").apply(Run.objects.all())
        sql, params = runs.query.sql_with_params()
        assert "= ANY(" in sql and [run.pk] in params
        assert list(runs) == [run]


@postgres_only
def test_on_postgres_a_url_fragment_found_common_walks_the_history(monkeypatch) -> None:
    # The planner's trigram estimate can be far too low for a fragment that is in fact
    # common; once its listing found more than a rare one has, the condition tests each
    # run's own URLs, and the newest-first page walks the history and stops.
    runs = [make_run(minutes, url=f"https://docs.example.com/{minutes}") for minutes in range(6)]
    make_run(30, url="https://other.example.org/")
    monkeypatch.setattr(text_search, "RARE_MATCHES", 3)
    with text_search.planned("", "docs.example") as rare:
        assert rare == set()
        matching = HistoryFilters(url="docs.example").apply(Run.objects.all())
        sql, params = matching.history_order()[:51].query.sql_with_params()
        assert "= ANY(" not in sql and "OFFSET 0" in sql
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            plan = explain(sql, params)
            cursor.execute("SET LOCAL enable_seqscan TO DEFAULT")
        assert "urldecision_url_trgm" not in plan, plan
    # The same runs, in the same order, as without planning and as through the API.
    assert [run.pk for run in decision_list(filters=HistoryFilters(url="docs.example")).items] == [
        run.pk for run in runs
    ]


@postgres_only
def test_on_postgres_the_media_status_reads_its_own_index() -> None:
    # ?status=media reads the few runs with media from their own (partial) index instead of
    # walking every run without media (0.5 s at 1M runs).
    for minutes in range(20):
        make_run(minutes, media=[{"kind": "image"}] if minutes % 10 == 0 else [])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE enrichment_run")
        cursor.execute("SET LOCAL enable_seqscan = off")
    media = HistoryFilters(status="media").apply(Run.objects.all()).history_order()[:51]
    assert "run_media_history" in explain(*media.query.sql_with_params())
    assert [run.pk for run in media] == list(
        Run.objects.exclude(media=[]).order_by("-created_at").values_list("pk", flat=True)
    )


@postgres_only
def test_on_postgres_a_common_url_fragment_is_plain_text(monkeypatch) -> None:
    # LIKE's wildcards and quotes in the fragment are characters to find, on either plan.
    odd = make_run(1, url="https://shop.example/50%_off'x")
    make_run(2, url="https://shop.example/50xyoff")
    monkeypatch.setattr(text_search, "RARE_MATCHES", 0)  # every fragment is walked for
    assert [run.pk for run in decision_list(filters=HistoryFilters(url="50%_off'")).items] == [
        odd.pk
    ]


@postgres_only
def test_on_postgres_a_common_url_fragment_finds_urls_stored_without_the_run_time(
    monkeypatch,
) -> None:
    # The walk looks for a run's URLs by its id and time (its month, on partitioned
    # storage); URL rows stored before they carried the run's time are found all the same.
    older = make_run(2, url="https://docs.example.com/old")
    newer = make_run(1, url="https://docs.example.com/new")
    UrlDecision.objects.filter(run=older).update(run_created_at=None)
    monkeypatch.setattr(text_search, "RARE_MATCHES", 0)  # every fragment is walked for
    assert [run.pk for run in decision_list(filters=HistoryFilters(url="docs.example")).items] == [
        newer.pk,
        older.pk,
    ]


@pytest.mark.skipif(
    os.environ.get("CONTROLUI_TEST_STORAGE") != "partitioned",
    reason="needs CONTROLUI_TEST_STORAGE=partitioned",
)
def test_on_partitioned_storage_a_common_url_fragment_reads_the_runs_month_only(
    monkeypatch,
) -> None:
    # Each run walked is looked up in its own month's URL rows (and the default partition
    # of rows without a time), not in every month's: the walk costs the same however many
    # months are kept.
    for minutes in range(6):  # the walk meets runs without the fragment too: all looked up
        host = "docs.example.com" if minutes % 2 else "other.example.org"
        make_run(minutes, url=f"https://{host}/{minutes}")
    monkeypatch.setattr(text_search, "RARE_MATCHES", 0)
    with text_search.planned("", "docs.example"):
        page = HistoryFilters(url="docs.example").apply(Run.objects.all()).history_order()[:3]
        sql, params = page.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
            plan = cursor.fetchone()[0]
    scans: list[dict[str, Any]] = []

    def walk(node: dict[str, Any]) -> None:
        if str(node.get("Relation Name", "")).startswith(UrlDecision._meta.db_table):
            scans.append(node)
        for child in node.get("Plans", []):
            walk(child)

    walk((plan if isinstance(plan, list) else json.loads(plan))[0]["Plan"])
    months = {scan["Relation Name"] for scan in scans}
    read = {scan["Relation Name"] for scan in scans if scan.get("Actual Loops", 0) > 0}
    assert len(months) > 2 and len(read) <= 2, (months, read)


@postgres_only
def test_on_postgres_a_rare_url_fragment_finds_urls_stored_without_the_run_time() -> None:
    older = make_run(2, url="https://docs.example.com/old")
    newer = make_run(1, url="https://docs.example.com/new")
    UrlDecision.objects.filter(run=older).update(run_created_at=None)
    with text_search.planned("", "docs.example") as rare:
        assert rare == {"url"}
        found = list(HistoryFilters(url="docs.example").apply(Run.objects.all()).history_order())
    assert found == [newer, older]


@pytest.mark.skipif(
    os.environ.get("CONTROLUI_TEST_STORAGE") != "partitioned",
    reason="needs CONTROLUI_TEST_STORAGE=partitioned",
)
def test_on_partitioned_storage_a_rare_word_reads_the_months_of_its_runs_only() -> None:
    # The runs of a rare word are read by id and by the span of their times: the months
    # holding them, not every month's id index (once per read of the page).
    found = make_run(1, original_body="zanzibar")
    make_run(60 * 24 * 40, original_body="other words")  # an older month
    with text_search.planned("zanzibar") as rare:
        assert rare == {"q"}
        runs = HistoryFilters(q="zanzibar").apply(Run.objects.all()).history_order()
        plan = explain(*runs.query.sql_with_params())
        assert list(runs) == [found]
    scanned = set(re.findall(rf"on ({Run._meta.db_table}_\w+)", plan))
    assert len(scanned) == 1, plan


# --- a rare URL fragment: the index reads the parts that narrow it ---------------------------

# The choice of the parts itself is pure: tests/common/test_trigrams.py.


@pytest.fixture
def fresh_url_sample():
    text_search._URL_SAMPLES.clear()
    yield
    text_search._URL_SAMPLES.clear()


@postgres_only
def test_on_postgres_a_rare_fragment_found_by_its_index_terms_is_matched_whole(
    user_client, fresh_url_sample
) -> None:
    for minutes in range(200):  # a sample where three URLs of 203 are rare (under 2 %)
        make_run(minutes + 10, url=f"https://docs.example.com/review/{minutes}")
    found = make_run(1, url="https://docs.example.com/review/481516?x=1")
    # Decoys: every rare trigram but not the fragment; the fragment in another case.
    make_run(2, url="https://docs.example.com/481/815/151/516")
    make_run(3, url="https://docs.example.com/Review/481516")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE enrichment_urldecision")
    assert len(text_search.url_sample()) >= trigrams.MIN_SAMPLE
    listing, whole = text_search.url_listings("/review/481516")
    assert [row.run_id for row in listing] == [found.pk]
    sql, params = listing.query.sql_with_params()
    assert "STRPOS" in sql.upper() and "%481%" in params and "%/review/481516%" not in params
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off")
        plan = explain(sql, params)
        cursor.execute("SET LOCAL enable_seqscan TO DEFAULT; SET LOCAL enable_indexscan TO DEFAULT")
    assert "urldecision_url_trgm" in plan or "url_idx" in plan, plan
    # Through the history and the API: the one run, listed as a rare fragment's.
    with text_search.planned("", "/review/481516") as rare:
        assert rare == {"url"}
    assert api_ids(user_client, url="/review/481516") == [found.pk]
    assert page_ids(user_client, url="/review/481516")[:1] == [found.pk]
    assert api_ids(user_client, url="/Review/481516") != [found.pk]


@postgres_only
def test_on_postgres_a_host_and_path_is_found_by_the_parts_that_narrow_it(
    user_client, fresh_url_sample
) -> None:
    # Eight hosts, twelve paths: "deploy" is in a twelfth of the URLs, "docs" in an eighth.
    words = "deploy review build release status upgrade invoice ticket query guide plan team"
    minutes = 10
    for host in ("docs", "blog", "shop", "news", "wiki", "mail", "maps", "chat"):
        for word in words.split():
            for number in (2, 3, 4):
                make_run(minutes, url=f"https://{host}.example.com/{word}/{number}")
                minutes += 1
    found = make_run(1, url="https://docs.example.com/deploy/1234")
    # Decoys: every part but not the fragment; the path on another host.
    make_run(2, url="https://docs.example.com/x/1/deploy")
    make_run(3, url="https://blog.example.com/deploy/1")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE enrichment_urldecision")
    listing, _ = text_search.url_listings("docs.example.com/deploy/1")
    _, params = listing.query.sql_with_params()
    # One part of "deploy", one of "docs", and "/1" (a word starting with 1, to the index).
    assert {"%dep%", "%doc%", "%/1%"} <= set(params) and "%exa%" not in params, params
    assert [row.run_id for row in listing] == [found.pk]
    assert api_ids(user_client, url="docs.example.com/deploy/1") == [found.pk]


@postgres_only
def test_on_postgres_the_url_sample_is_bounded_and_read_once_a_while(
    fresh_url_sample, monkeypatch
) -> None:
    for minutes in range(120):
        make_run(minutes, url=f"https://docs.example.com/review/{minutes}")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE enrichment_urldecision")
    monkeypatch.setattr(text_search, "MAX_URL_SAMPLE", 40)
    sample = text_search.url_sample()
    assert 30 <= len(sample) <= 40 and "https://docs.example.com/review/0" in sample
    make_run(1, url="https://docs.example.com/NEW")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE enrichment_urldecision")
    assert text_search.url_sample() is sample  # until URL_SAMPLE_SECONDS have passed


@postgres_only
def test_on_postgres_index_terms_that_take_too_long_give_way_to_the_whole_fragment(
    user_client, fresh_url_sample, monkeypatch
) -> None:
    # Trigrams rare one by one can be common together (those of a word in many URLs): the
    # shortcut has SHORTCUT_MS, then the whole fragment is listed, and the answer is the same.
    for minutes in range(200):
        make_run(minutes + 10, url=f"https://docs.example.com/review/{minutes}")
    found = make_run(1, url="https://docs.example.com/review/481516")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE enrichment_urldecision")
    tried = []
    summed = text_search._summed

    def slow_shortcut(rows, columns, per_run=False):
        tried.append("STRPOS" in str(rows.query).upper())
        if tried[-1]:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_sleep(0.2)")  # past its budget: cancelled
        return summed(rows, columns, per_run)

    monkeypatch.setattr(text_search, "_summed", slow_shortcut)
    monkeypatch.setattr(text_search, "SHORTCUT_MS", 20)
    with text_search.planned("", "/review/481516") as rare:
        assert rare == {"url"}
        runs = list(HistoryFilters(url="/review/481516").apply(Run.objects.all()))
    assert tried == [True, False] and runs == [found]
    assert api_ids(user_client, url="/review/481516") == [found.pk]


# --- newest first: a rare fragment's newest months are listed first -------------------------

DAY = 60 * 24
partitioned_only = pytest.mark.skipif(
    os.environ.get("CONTROLUI_TEST_STORAGE") != "partitioned",
    reason="needs CONTROLUI_TEST_STORAGE=partitioned",
)


def three_months_of_runs() -> list[Run]:
    """Runs holding ``docs.example`` today, 35 and 70 days ago (the newest first), among
    runs without it and runs of another outcome."""
    found = []
    for minutes in (1, 2, 3, 35 * DAY, 35 * DAY + 1, 70 * DAY, 70 * DAY + 1):
        outcome = "error" if minutes % 2 == 0 else "success"
        found.append(make_run(minutes, url=f"https://docs.example.com/{minutes}", outcome=outcome))
        make_run(minutes, url=f"https://other.example.org/{minutes}", outcome=outcome)
    return found


def api_pages(client: Any, limit: int, **params: str) -> list[list[int]]:
    pages, cursor = [], None
    while True:
        query = {**params, "limit": str(limit), **({"cursor": cursor} if cursor else {})}
        response = client.get("/api/decisions", query)
        assert response.status_code == 200, response.content
        body = response.json()
        pages.append([item["runId"] for item in body["items"]])
        cursor = body["nextCursor"]
        if not cursor:
            return pages


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 50])
def test_a_url_fragment_pages_newest_first_across_months_without_a_gap(user_client, limit) -> None:
    # Whichever month a page starts and ends in, following the cursors lists every run
    # holding the fragment once, newest first, with or without another filter.
    runs = three_months_of_runs()
    pages = api_pages(user_client, limit, url="docs.example")
    assert [pk for page in pages for pk in page] == [run.pk for run in runs]
    assert all(len(page) == limit for page in pages[:-1])
    errors = [run.pk for run in runs if run.outcome == "error"]
    pages = api_pages(user_client, limit, url="docs.example", outcome="error")
    assert [pk for page in pages for pk in page] == errors


@postgres_only
def test_on_postgres_a_fragment_newest_first_finds_urls_stored_without_the_run_time(
    user_client,
) -> None:
    # A URL row without its run's time could be of any month: the fragment is listed whole.
    runs = three_months_of_runs()
    UrlDecision.objects.filter(run=runs[-1]).update(run_created_at=None)
    assert api_pages(user_client, 2, url="docs.example")[-1][-1] == runs[-1].pk
    assert [pk for page in api_pages(user_client, 2, url="docs.example") for pk in page] == [
        run.pk for run in runs
    ]


@postgres_only
def test_on_postgres_a_fragment_found_common_in_the_newest_months_is_walked(
    user_client, monkeypatch
) -> None:
    runs = three_months_of_runs()
    monkeypatch.setattr(text_search, "RARE_MATCHES", 2)
    assert [pk for page in api_pages(user_client, 2, url="docs.example") for pk in page] == [
        run.pk for run in runs
    ]


def listings(queries: Any) -> int:
    return sum("ARRAY_AGG(g.run_id" in query["sql"] for query in queries)


@partitioned_only
def test_on_partitioned_storage_a_page_the_newest_month_fills_lists_that_month_only(
    user_client,
) -> None:
    from django.db import connection as default
    from django.test.utils import CaptureQueriesContext

    runs = three_months_of_runs()
    with CaptureQueriesContext(default) as first:
        assert api_ids(user_client, url="docs.example", limit="2") == [runs[0].pk, runs[1].pk]
    # This month's rows (and any without a run time): one month listed.
    month_bounded = [q["sql"] for q in first.captured_queries if "ARRAY_AGG(g.run_id" in q["sql"]]
    assert len(month_bounded) == 1, month_bounded
    assert '"run_created_at" >=' in month_bounded[0] and "IS NULL" in month_bounded[0]
    with CaptureQueriesContext(default) as all_months:
        assert api_ids(user_client, url="docs.example", limit="50") == [run.pk for run in runs]
    # This month, then every older one.
    assert listings(all_months.captured_queries) == 2
    # The history page shows its rows as the API lists them…
    with CaptureQueriesContext(default) as html:
        assert page_ids(user_client, url="docs.example", limit="2")[:2] == [runs[0].pk, runs[1].pk]
    assert listings(html.captured_queries) == 1
    # …and its counts (counts=1) are of every match: it lists them once, whole.
    with CaptureQueriesContext(default) as counted:
        ids = page_ids(user_client, url="docs.example", counts="1")
        assert ids[: len(runs)] == [run.pk for run in runs]
    whole = [q["sql"] for q in counted.captured_queries if "ARRAY_AGG(g.run_id" in q["sql"]]
    assert len(whole) == 1 and '"run_created_at" >=' not in whole[0], whole


# --- the history page of a rare fragment: one read of its runs ------------------------------


def facet_runs() -> list[Run]:
    """Runs holding ``docs.example`` over three months, of every outcome, channels in two
    cases, both chat types, durations and derived statuses, among runs without it."""
    runs = []
    kinds = [
        {"outcome": "success", "channel": "Slack", "chat_type": "group", "duration_ms": 40},
        {"outcome": "error", "channel": "slack", "chat_type": "direct", "duration_ms": 900},
        {"outcome": "skipped", "channel": "telegram", "chat_type": "group", "media": [{"k": 1}]},
        {"outcome": "success", "channel": "Telegram", "chat_type": "direct", "dns_failed": True},
        {"outcome": "error", "channel": "discord", "chat_type": "group", "attempts_failed": True},
    ]
    for index, minutes in enumerate((1, 2, 3, 4, 35 * DAY, 35 * DAY + 1, 70 * DAY, 70 * DAY + 2)):
        fields = dict(kinds[index % len(kinds)])
        channel = fields.pop("channel")
        run = make_run(minutes, url=f"https://docs.example.com/{minutes}", **fields)
        Run.objects.filter(pk=run.pk).update(channel=channel)
        runs.append(run)
        make_run(minutes, url=f"https://other.example.org/{minutes}", **fields)
    return runs


def page_seen(found: Any, *, first: bool) -> tuple[Any, ...]:
    """What the page shows of ``found`` (the newest run, which only a first page's banner
    of new runs reads, on first pages: the reads took a later page's first row)."""
    durations = found.durations
    return (
        [run.pk for run in found.page.items],
        found.page.next_cursor,
        (found.count.count, found.count.exact),
        {name: [(f.value, f.count) for f in facets] for name, facets in found.facets.items()},
        found.newest_run_id if first else None,
        durations and (durations.count, durations.p50, durations.p95, durations.buckets),
        (found.counts_skipped, found.durations_skipped),
    )


def every_page_seen(filters: HistoryFilters) -> tuple[list[tuple[Any, ...]], list[str]]:
    """What each history page of ``filters`` shows, following its cursors 3 runs at a
    time, and the SQL of the queries that read them."""
    from django.db import connection as default
    from django.test.utils import CaptureQueriesContext

    seen, cursor = [], None
    with CaptureQueriesContext(default) as queries:
        while True:
            found = history_page(filters=filters, cursor=cursor, limit=3)
            seen.append(page_seen(found, first=cursor is None))
            cursor = found.page.next_cursor
            if not cursor:
                break
    return seen, [query["sql"] for query in queries.captured_queries]


@postgres_only
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"outcome": "error"},
        {"outcome": "error,skipped", "chatType": "group"},
        {"channel": "SLACK"},
        {"channel": "telegram,discord", "status": "media,dns-failure"},
        {"status": "attempts-failed"},
        {"outcome": "running"},
        {"sort": "-duration", "outcome": "error,success"},
        {"sort": "time"},
    ],
    ids=[
        "fragment-alone",
        "outcome",
        "two-outcomes-chat-type",
        "channel",
        "statuses",
        "status",
        "none-match",
        "longest-first",
        "oldest-first",
    ],
)
def test_on_postgres_a_rare_fragments_page_is_worked_out_from_one_read_of_its_runs(
    monkeypatch, params
) -> None:
    # Rows, cursors, count, facets, durations: what the page showed when each was a read
    # (the count below its cap, which these runs are: past it, see the next test).
    from enrichment.selectors import history_page as module

    facet_runs()
    filters = HistoryFilters.from_params({"url": "docs.example", **params})
    seen, one_read = every_page_seen(filters)
    # No grouping, count or durations query: the facets were worked out of the one read.
    assert not any("GROUP BY 1, 2, 3" in sql for sql in one_read)
    monkeypatch.setattr(module, "_from_matched", lambda *args, **kwargs: None)
    each, reads = every_page_seen(filters)
    assert any("GROUP BY 1, 2, 3" in sql for sql in reads)
    assert seen == each


@postgres_only
def test_on_postgres_a_rare_fragments_page_counts_and_facets_what_a_user_chose(
    user_client,
) -> None:
    runs = facet_runs()
    found = history_page(
        filters=HistoryFilters.from_params({"url": "docs.example", "outcome": "error"}),
        cursor=None,
        limit=50,
    )
    errors = [run.pk for run in runs if run.outcome == "error"]
    assert [run.pk for run in found.page.items] == errors
    assert (found.count.count, found.count.exact) == (len(errors), True)
    # The outcome's choices ignore the outcome chosen; the others count the errors only.
    outcomes = {facet.value: facet.count for facet in found.facets["outcome"]}
    assert (outcomes["success"], outcomes["error"], outcomes["skipped"]) == (3, 3, 2)
    assert {f.value: f.count for f in found.facets["channel"]} == {"slack": 2, "discord": 1}
    assert {f.value: f.count for f in found.facets["status"]}["attempts-failed"] == 1
    assert found.durations is not None and found.durations.count == 2
    assert found.newest_run_id == errors[0]


@postgres_only
def test_on_postgres_a_rare_fragment_is_counted_exactly_past_the_count_cap(
    user_client, monkeypatch
) -> None:
    # Its matches were all read for the facets: the count says how many, not "more than".
    from enrichment.selectors import history_page as module

    runs = facet_runs()
    monkeypatch.setattr(module, "COUNT_CAP", 2)
    # A page of two, so the rows cannot be the count; the counts are the page's second
    # request (counts=1).
    query = {"url": "docs.example", "limit": "2", "counts": "1"}
    html = user_client.get("/decisions/", query).content.decode()
    assert re.search(rf'id="result-count" data-exact="true">{len(runs)} runs<', html)
    assert 'id="facet-window"' not in html
    # Without a rare filter the count still stops at the cap (a page that holds every
    # match is its own count, so a page of two).
    html = user_client.get("/decisions/", {"limit": "2"}).content.decode()
    assert re.search(r'id="result-count" data-exact="false">more than 2 runs<', html)


# --- a rare text in a duration order: its runs ranked from its listing ----------------------


def timed_runs() -> list[Run]:
    """Runs holding ``docs.example`` over three months with durations (ties, none, one whose
    URL row was stored before it carried its run's duration), among runs without it."""
    durations = [700, 40, None, 700, 9000, 40, 1200, None, 55]
    runs = []
    for index, duration in enumerate(durations):
        minutes = (1, 2, 35 * DAY, 35 * DAY + 5, 70 * DAY)[index % 5] + index
        outcome = "error" if index % 3 == 0 else "success"
        runs.append(
            make_run(
                minutes,
                url=f"https://docs.example.com/{index}",
                outcome=outcome,
                duration_ms=duration,
            )
        )
        make_run(minutes, url=f"https://other.example.org/{index}", duration_ms=5)
    UrlDecision.objects.filter(run=runs[4]).update(run_duration_ms=None)
    return runs


def in_order(runs: list[Run], sort: str) -> list[int]:
    missing = -1 if sort == "-duration" else 2**31 - 1
    keyed = [(missing if run.duration_ms is None else run.duration_ms, run.pk) for run in runs]
    return [pk for _, pk in sorted(keyed, reverse=sort == "-duration")]


@pytest.mark.parametrize("sort", ["-duration", "duration"])
@pytest.mark.parametrize("limit", [1, 2, 4, 50])
def test_a_rare_fragment_in_a_duration_order_pages_every_run_once_in_order(
    user_client, sort, limit
) -> None:
    # Ties broken by id, runs without a duration last both ways, a URL row without its run's
    # duration (looked up), alone or with another filter: as every run sorted.
    runs = timed_runs()
    pages = api_pages(user_client, limit, url="docs.example", sort=sort)
    assert [pk for page in pages for pk in page] == in_order(runs, sort)
    assert all(len(page) == limit for page in pages[:-1])
    errors = [run for run in runs if run.outcome == "error"]
    pages = api_pages(user_client, limit, url="docs.example", sort=sort, outcome="error")
    assert [pk for page in pages for pk in page] == in_order(errors, sort)
    assert page_ids(user_client, url="docs.example", sort=sort)[: len(runs)] == in_order(runs, sort)


@postgres_only
def test_on_postgres_a_rare_fragments_longest_runs_are_read_alone(monkeypatch) -> None:
    # The page reads its first limit + 1 runs of the ranking, not every run of the fragment;
    # when another filter leaves the page short, more of the ranking (4x) until it is full.
    runs = timed_runs()
    narrowed: list[int] = []
    in_effect = text_search._in_effect

    def recorded(plan):
        narrowed.append(len(plan.rare[("url", "docs.example")].ids))
        return in_effect(plan)

    monkeypatch.setattr(text_search, "_in_effect", recorded)
    filters = HistoryFilters(url="docs.example", sort="-duration")
    page = decision_list(filters=filters, limit=2)
    assert [run.pk for run in page.items] == in_order(runs, "-duration")[:2]
    assert narrowed == [3]
    narrowed.clear()
    errors = [run for run in runs if run.outcome == "error"]
    page = decision_list(
        filters=HistoryFilters(url="docs.example", sort="-duration", outcome="error"), limit=2
    )
    assert [run.pk for run in page.items] == in_order(errors, "-duration")[:2]
    # Its first three runs hold two errors: then 12 of the ranking, i.e. all nine.
    assert narrowed == [3, 9]


@postgres_only
def test_on_postgres_a_rare_fragments_newest_run_in_another_order_comes_from_its_listing() -> None:
    from enrichment.selectors.history_page import history_rows

    runs = timed_runs()
    filters = HistoryFilters(url="docs.example", sort="-duration")
    assert history_rows(filters=filters, cursor=None, limit=3).newest_run_id == runs[0].pk
    with text_search.planned("", "docs.example"):
        assert text_search.newest_listed("", "docs.example") == runs[0].pk
    # A URL row without its run's time: the newest is looked up, the same run.
    UrlDecision.objects.filter(run=runs[0]).update(run_created_at=None)
    with text_search.planned("", "docs.example"):
        assert text_search.newest_listed("", "docs.example") is None
    assert history_rows(filters=filters, cursor=None, limit=3).newest_run_id == runs[0].pk
    # With another filter the listing cannot tell: the newest error is looked up.
    errors = HistoryFilters(url="docs.example", sort="-duration", outcome="error")
    newest_error = next(run for run in runs if run.outcome == "error")
    assert history_rows(filters=errors, cursor=None, limit=3).newest_run_id == newest_error.pk
