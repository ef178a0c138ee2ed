"""A word's or URL fragment's history shows its rows first; the count, the facet counts and
the duration chart come after, alone from ``/decisions/counts/`` (fetched by
``history-counts.js``) or, without scripts, from the same page asked for again with
``counts=1`` (a link)."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.enrichment.views.test_history import make_run, run_ids
from tests.enrichment.views.test_history_triage import facet

pytestmark = pytest.mark.django_db


def counts_url(html: str) -> str | None:
    """Where the page asks for its counts (the pending marker's address), unescaped."""
    found = re.search(r'id="counts-pending" data-counts-url="([^"]+)"', html)
    return unescape(found.group(1)) if found else None


def result_count(html: str) -> str:
    found = re.search(r'id="result-count" data-exact="(\w+)">([^<]*)<', html)
    assert found is not None
    return f"{found[2]} ({'exact' if found[1] == 'true' else 'lower bound'})"


def mixed_runs() -> dict[str, list[int]]:
    """Five runs with a URL on docs.example (three errors, one on slack; durations 100-500
    ms) and one elsewhere."""
    now = timezone.now()
    made: dict[str, list[int]] = {"docs": [], "other": []}
    for index, (outcome, channel) in enumerate(
        [
            ("error", "telegram"),
            ("success", "slack"),
            ("error", "telegram"),
            ("error", "telegram"),
            ("success", "telegram"),
        ]  # fmt: skip
    ):
        run = make_run(
            urls=1,
            created_at=now - timedelta(minutes=index + 1),
            outcome=outcome,
            channel=channel,
            duration_ms=100 * (index + 1),
        )
        run.url_decisions.update(url=f"https://docs.example/guide/{index}")
        made["docs"].append(run.pk)
    made["other"].append(make_run(urls=1, created_at=now - timedelta(minutes=9)).pk)
    return made


@pytest.mark.parametrize("text", [{"url": "docs.example/guide"}, {"q": "guide"}])
def test_a_text_filter_shows_the_rows_first_and_the_counts_on_the_second_request(
    user_client, text
) -> None:
    made = mixed_runs()
    if "q" in text:  # the word in the bodies of the docs.example runs only
        from enrichment.models import Run

        Run.objects.filter(pk__in=made["docs"]).update(original_body="read the guide")
    query = {**text, "limit": "2"}
    html = user_client.get("/decisions/", query).content.decode()
    # The rows, newest first, and what they tell of the count.
    assert run_ids(html) == made["docs"][:2]
    assert result_count(html) == "more than 2 runs (lower bound)"
    # No count is guessed: the facets wait, and say so; the chart is not drawn yet.
    assert 'class="facet-count"' not in html
    assert "Counting the runs of each choice…" in html
    assert 'id="duration-p50"' not in html
    assert re.search(r'id="counts-note"[^>]*aria-busy="true">· counting… <a href="\?', html)
    # The page's counts: the same filters and page, with counts=1.
    address = counts_url(html)
    assert address is not None and address.startswith("?")
    assert parse_qs(urlsplit(address).query) == {
        **{name: [value] for name, value in query.items()},
        "counts": ["1"],
    }
    counted = user_client.get("/decisions/" + address).content.decode()
    assert run_ids(counted) == made["docs"][:2]
    assert result_count(counted) == "5 runs (exact)"
    outcomes = {value: n for value, n in facet(counted, "outcome").items() if n}
    assert outcomes == {"success": 2, "error": 3}
    assert facet(counted, "channel") == {"telegram": 4, "slack": 1}
    assert 'id="duration-p50">300 ms<' in counted
    assert counts_url(counted) is None and "counting…" not in counted


def test_the_counts_address_keeps_the_page_of_an_older_cursor(user_client) -> None:
    made = mixed_runs()
    first = user_client.get("/decisions/", {"url": "docs.example", "limit": "2"}).content.decode()
    older = re.search(r'id="page-older"[^>]*href="([^"]+)"', first)
    assert older is not None
    second = user_client.get("/decisions/" + unescape(older[1])).content.decode()
    assert run_ids(second) == made["docs"][2:4]
    address = counts_url(second)
    assert address is not None
    params = parse_qs(urlsplit(address).query)
    assert params["counts"] == ["1"] and "cursor" in params and "trail" in params
    counted = user_client.get("/decisions/" + address).content.decode()
    assert run_ids(counted) == made["docs"][2:4]  # the same rows, now with their counts
    assert result_count(counted) == "5 runs (exact)"
    # Paging on from a counted page asks for the counts again (counts=1 is not carried).
    assert "counts=1" not in (re.search(r'id="page-older"[^>]*href="([^"]+)"', counted) or [""])[0]


def test_without_a_text_filter_the_counts_are_on_the_page(user_client) -> None:
    mixed_runs()
    html = user_client.get("/decisions/", {"outcome": "error", "limit": "2"}).content.decode()
    assert counts_url(html) is None and "counting…" not in html
    assert result_count(html) == "3 runs (exact)"
    assert facet(html, "outcome")["success"] == 3


def test_a_text_filter_matching_nothing_still_gets_the_counts_of_the_other_choices(
    user_client,
) -> None:
    mixed_runs()
    query = {"url": "docs.example/guide", "outcome": "skipped"}
    html = user_client.get("/decisions/", query).content.decode()
    assert "No runs match these filters" in html
    address = counts_url(html)
    assert address is not None
    # Without scripts, the facets' note is the link.
    assert f'Counting the runs of each choice… <a href="{address.replace("&", "&amp;")}">' in html
    counted = user_client.get("/decisions/" + address).content.decode()
    assert facet(counted, "outcome")["error"] == 3  # loosening the outcome would show them


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"url": "ab", "counts": "1"}, "needs at least 3 characters"),
        ({"url": "docs\x00x", "counts": "1"}, "contains a NUL character"),
        ({"url": "docs.example", "counts": "1", "cursor": "garbage"}, "cursor:"),
        ({"url": "docs.example", "counts": "1", "limit": "0"}, "limit:"),
    ],
)
def test_a_counts_request_with_bad_filters_is_refused_by_name(user_client, query, message) -> None:
    mixed_runs()
    response = user_client.get("/decisions/", query)
    assert response.status_code == 400
    html = response.content.decode()
    assert message in unescape(html)
    assert counts_url(html) is None  # nothing is asked for again


@pytest.mark.parametrize("value", ["0", "yes", "", "1" * 600])
def test_any_other_counts_value_leaves_the_counts_for_later(user_client, value) -> None:
    mixed_runs()
    html = user_client.get("/decisions/", {"url": "docs.example", "counts": value})
    assert html.status_code == 200
    assert counts_url(html.content.decode()) is not None


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs DATABASE_URL=postgres://…")
def test_a_sorted_text_page_finds_its_newest_run_among_the_listed_runs(user_client) -> None:
    # In another order the newest matching run is looked up apart, under the same plan as
    # the rows: without it a URL fragment's newest run was found by walking the history
    # (620 ms for a host and a path at 10M runs).
    made = mixed_runs()
    with CaptureQueriesContext(connection) as queries:
        response = user_client.get("/decisions/", {"url": "docs.example", "sort": "-duration"})
    html = response.content.decode()
    assert run_ids(html) == list(reversed(made["docs"]))  # longest first
    assert f'data-top-run-id="{made["docs"][0]}"' in html  # the newest of them
    walks = [
        q["sql"]
        for q in queries.captured_queries
        if "LIKE" in q["sql"] and "ARRAY_AGG" not in q["sql"] and "EXPLAIN" not in q["sql"]
    ]
    assert not walks, walks


def counts_part_url(html: str) -> str | None:
    """Where the page's script asks for the counts alone, unescaped."""
    found = re.search(r'id="counts-pending"[^>]* data-counts-part="([^"]+)"', html)
    return unescape(found.group(1)) if found else None


@pytest.mark.parametrize("text", [{"url": "docs.example/guide"}, {"q": "guide"}])
def test_the_script_gets_the_counts_alone_the_same_as_on_the_counted_page(
    user_client, text
) -> None:
    made = mixed_runs()
    if "q" in text:
        from enrichment.models import Run

        Run.objects.filter(pk__in=made["docs"]).update(original_body="read the guide")
    query = {**text, "limit": "2", "outcome": "error"}
    html = user_client.get("/decisions/", query).content.decode()
    address = counts_part_url(html)
    assert address is not None
    assert urlsplit(address).path == "/decisions/counts/"
    assert parse_qs(urlsplit(address).query) == {name: [value] for name, value in query.items()}
    response = user_client.get(address)
    assert response.status_code == 200
    part = response.content.decode()
    # The count, the facets (the ticked outcome kept ticked) and the chart, as on the
    # counted page; no rows, no page around them.
    assert result_count(part) == "3 runs (exact)"
    assert {value: n for value, n in facet(part, "outcome").items() if n} == {
        "success": 2,
        "error": 3,
    }
    assert re.search(r'name="outcome" value="error"[^>]* checked', part)
    assert 'id="duration-p50">300 ms<' in part
    assert 'id="counts-note"' in part and "counting…" not in part
    assert "<table" not in part and "<html" not in part and run_ids(part) == []
    counted = user_client.get("/decisions/" + (counts_url(html) or "")).content.decode()
    for fragment_id in ("result-count", "duration-p50"):
        mine = re.search(rf'id="{fragment_id}"[^>]*>[^<]*<', part)
        theirs = re.search(rf'id="{fragment_id}"[^>]*>[^<]*<', counted)
        assert mine and theirs and mine[0] == theirs[0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs DATABASE_URL=postgres://…")
def test_the_counts_alone_do_not_read_the_rows_again(user_client) -> None:
    # The rows were shown by the first request: a rare fragment's counts come from its one
    # read of the matching runs, and the page's runs are not looked up by id again.
    mixed_runs()
    query = {"url": "docs.example/guide", "limit": "2"}

    def rows_reads(path: str, params: dict[str, str]) -> int:
        with CaptureQueriesContext(connection) as queries:
            response = user_client.get(path, params)
        assert result_count(response.content.decode()) == "5 runs (exact)"
        # Only the rows' read selects what a row shows (its session key, among others).
        return sum('"enrichment_run"."session_key"' in q["sql"] for q in queries.captured_queries)

    assert rows_reads("/decisions/", {**query, "counts": "1"}) == 1
    assert rows_reads("/decisions/counts/", query) == 0


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"url": "ab"}, "needs at least 3 characters"),
        ({"url": "docs\x00x"}, "contains a NUL character"),
        ({"url": "docs.example", "cursor": "garbage"}, "cursor:"),
        ({"url": "docs.example", "limit": "0"}, "limit:"),
        ({"url": "docs.example", "outcome": "nope"}, "outcome:"),
        ({"channel": "c" * 600}, "longer than 500 characters"),
    ],
)
def test_the_counts_alone_with_bad_filters_are_refused_by_name(user_client, query, message) -> None:
    mixed_runs()
    response = user_client.get("/decisions/counts/", query)
    assert response.status_code == 400
    body = unescape(response.content.decode())
    assert message in body
    assert 'id="facet-counts"' not in body


def test_the_counts_alone_need_a_login_and_a_get(user_client) -> None:
    response = Client().get("/decisions/counts/", {"url": "docs.example"})
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert user_client.post("/decisions/counts/", {"url": "docs.example"}).status_code == 405
