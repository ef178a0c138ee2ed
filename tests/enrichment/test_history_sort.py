"""History sorted by time, duration or URL count, both ways, paged with keyset cursors.

Every order is walked page by page (small pages, ties on the sort key, runs without a
duration) and must give each matching run exactly once, in the order a person expects.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from datetime import timedelta
from typing import get_args
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone

from enrichment.api.history import SortParam
from enrichment.models import Run
from enrichment.selectors import SORTS, HistoryFilters, decision_list, decision_neighbours
from tests.enrichment.selectors.test_exports import streamed

pytestmark = pytest.mark.django_db

NO_DURATION_LAST = 2**40  # a run without a duration sorts after every real one, both ways


def make_runs() -> list[Run]:
    """17 runs: durations and URL counts with ties, two equal timestamps, three unfinished."""
    now = timezone.now().replace(microsecond=0)
    runs = []
    for i in range(17):
        stamp = now - timedelta(minutes=i if i != 5 else 4)  # runs 4 and 5: the same time
        runs.append(
            Run(
                created_at=stamp,
                channel="slack" if i % 4 else "discord",
                outcome="running" if i in (2, 9, 15) else "success",
                duration_ms=None if i in (2, 9, 15) else (i * 37) % 5 * 100,  # 0..400, ties
                url_count=i % 3,
            )
        )
    return Run.objects.bulk_create(runs)


def expected(runs: list[Run], sort: str) -> list[int]:
    def time_key(run: Run) -> tuple[object, int]:
        return (run.created_at, run.pk)

    def urls_key(run: Run) -> tuple[object, int]:
        return (run.url_count, run.pk)

    if sort in ("-time", "time"):
        return [r.pk for r in sorted(runs, key=time_key, reverse=sort == "-time")]
    if sort in ("-urls", "urls"):
        return [r.pk for r in sorted(runs, key=urls_key, reverse=sort == "-urls")]
    finished = [r for r in runs if r.duration_ms is not None]
    unfinished = [r for r in runs if r.duration_ms is None]
    descending = sort == "-duration"
    return [
        r.pk for r in sorted(finished, key=lambda r: (r.duration_ms, r.pk), reverse=descending)
    ] + [r.pk for r in sorted(unfinished, key=lambda r: r.pk, reverse=descending)]


def walk(filters: HistoryFilters, limit: int) -> list[int]:
    seen: list[int] = []
    cursor = None
    for _ in range(100):
        page = decision_list(filters=filters, cursor=cursor, limit=limit)
        seen.extend(run.pk for run in page.items)
        cursor = page.next_cursor
        if cursor is None:
            return seen
    raise AssertionError("paging never ended")


@pytest.mark.parametrize("sort", list(SORTS))
@pytest.mark.parametrize("limit", [1, 4, 50])
def test_every_order_pages_each_run_once_in_order(sort, limit) -> None:
    runs = make_runs()
    ids = walk(HistoryFilters.from_params({"sort": sort}), limit)
    assert ids == expected(runs, sort)
    assert len(set(ids)) == len(runs)


@pytest.mark.parametrize("sort", list(SORTS))
def test_orders_combine_with_filters(sort) -> None:
    runs = make_runs()
    slack = [run for run in runs if run.channel == "slack"]
    ids = walk(HistoryFilters.from_params({"sort": sort, "channel": "SLACK"}), 3)
    assert ids == expected(slack, sort)


def test_duration_orders_put_runs_without_a_duration_last_both_ways() -> None:
    make_runs()
    for sort in ("-duration", "duration"):
        items = decision_list(filters=HistoryFilters.from_params({"sort": sort}), limit=50).items
        assert [run.duration_ms for run in items[-3:]] == [None, None, None]
        durations = [run.duration_ms for run in items[:-3]]
        assert durations == sorted(durations, reverse=sort == "-duration")


def test_api_sort_matches_the_selector_and_keeps_its_contract(user_client) -> None:
    runs = make_runs()
    seen: list[int] = []
    query = "sort=-duration&limit=5"
    while True:
        body = user_client.get(f"/api/decisions?{query}").json()
        assert set(body) == {"items", "nextCursor"}
        seen.extend(item["runId"] for item in body["items"])
        if not body["nextCursor"]:
            break
        query = f"sort=-duration&limit=5&cursor={body['nextCursor']}"
    assert seen == expected(runs, "-duration")
    # Without ``sort`` the API answers exactly as before: newest first.
    default = user_client.get("/api/decisions").json()["items"]
    assert [item["runId"] for item in default] == expected(runs, "-time")


@pytest.mark.parametrize("bad", ["duration ", "-Duration", "size", "-", "x" * 5000, "a\x00b"])
def test_api_refuses_an_unknown_sort(user_client, bad) -> None:
    for path in ("/api/decisions", "/api/decisions/export"):
        response = user_client.get(path, {"sort": bad})
        assert response.status_code == 422, path
        assert "sort" in response.content.decode()


def test_api_sort_values_are_the_selector_orders() -> None:
    assert set(get_args(SortParam)) == set(SORTS)


def test_a_cursor_of_one_order_is_refused_by_another(user_client) -> None:
    make_runs()
    cursor = user_client.get("/api/decisions?sort=urls&limit=2").json()["nextCursor"]
    refused = user_client.get(f"/api/decisions?sort=-duration&cursor={cursor}")
    assert refused.status_code == 422
    assert "start again from the first page" in refused.json()["detail"]
    page = user_client.get(f"/decisions/?sort=time&cursor={cursor}")
    assert page.status_code == 400
    assert "start again from the first page" in page.content.decode()
    # A cursor of the default order (the format of every cursor before sorting) still works.
    old = user_client.get("/api/decisions?limit=2").json()["nextCursor"]
    assert user_client.get(f"/api/decisions?cursor={old}").status_code == 200
    assert user_client.get(f"/api/decisions?sort=-time&cursor={old}").status_code == 200


def forged(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "-duration|" + "9" * 30 + "|5",  # a key no column holds
        "-duration|-" + "9" * 400 + "|5",
        "-duration|5|" + "9" * 20,  # an id no column holds
        "-duration|9223372036854775808|5",  # one past the largest
    ],
    ids=["key-30-digits", "key-400-digits", "id-20-digits", "key-2**63"],
)
def test_a_cursor_with_a_number_out_of_range_is_refused_naming_the_cursor(
    user_client, cursor
) -> None:
    # SQLite cannot bind such a number (it was a 500): refused, on the page and the API.
    make_runs()
    refused = user_client.get("/api/decisions", {"sort": "-duration", "cursor": forged(cursor)})
    assert refused.status_code == 422, refused.content
    assert refused.json()["errors"] == ["cursor"]
    page = user_client.get("/decisions/", {"sort": "-duration", "cursor": forged(cursor)})
    assert page.status_code == 400 and "not a cursor returned by this API" in page.content.decode()
    largest = forged("-duration|9223372036854775807|9223372036854775807")
    assert user_client.get("/api/decisions", {"sort": "-duration", "cursor": largest}).json()[
        "items"
    ] == [item for item in user_client.get("/api/decisions?sort=-duration").json()["items"]]


@pytest.mark.django_db(transaction=True)  # the export reads its chunks in a worker thread
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_export_follows_the_sort(user_client, fmt) -> None:
    runs = make_runs()
    response = user_client.get(f"/api/decisions/export?format={fmt}&sort=urls&channel=slack")
    body = streamed(response)
    if fmt == "csv":
        ids = [int(row["runId"]) for row in csv.DictReader(io.StringIO(body))]
    else:
        ids = [item["runId"] for item in json.loads(body)]
    assert ids == expected([run for run in runs if run.channel == "slack"], "urls")


@pytest.mark.django_db(transaction=True)
def test_export_crosses_chunks_in_a_sorted_order(user_client, monkeypatch) -> None:
    from enrichment import selectors

    monkeypatch.setattr(selectors, "EXPORT_CHUNK", 4)
    runs = make_runs()
    response = user_client.get("/api/decisions/export?format=json&sort=duration")
    ids = [item["runId"] for item in json.loads(streamed(response))]
    assert ids == expected(runs, "duration")


# --- the page --------------------------------------------------------------------------


def run_ids(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<td data-label="Run"><a href="/decisions/(\d+)/', html)]


def older_link(html: str) -> str | None:
    match = re.search(r'id="page-older" rel="next" href="([^"]+)"', html)
    return match.group(1).replace("&amp;", "&") if match else None


@pytest.mark.parametrize("sort", list(SORTS))
def test_page_walks_every_order_with_older_links(user_client, sort) -> None:
    runs = make_runs()
    path = f"/decisions/?sort={sort}&limit=4"
    seen: list[int] = []
    while path:
        response = user_client.get(path if path.startswith("/") else "/decisions/" + path)
        assert response.status_code == 200
        html = response.content.decode()
        seen.extend(run_ids(html))
        path = older_link(html)
        if path:
            assert parse_qs(urlsplit(path).query).get("sort", ["-time"]) == [sort]
            label = re.search(r'id="page-older"[^>]*>([^<]+)<', html).group(1)
            assert label == ("Older →" if sort == "-time" else "Next →")
    assert seen == expected(runs, sort)


def header(html: str, label: str) -> re.Match[str]:
    found = re.search(
        rf'<th scope="col"[^>]*aria-sort="(\w+)"><a class="sort-link" href="\?([^"]*)">'
        rf'{label}(?: <span aria-hidden="true">(.)</span>)?</a></th>',
        html,
    )
    assert found, label
    return found


def test_column_headers_are_links_that_sort_and_reverse(user_client) -> None:
    make_runs()
    html = user_client.get("/decisions/?channel=slack").content.decode()
    time = header(html, "Time")
    assert (time.group(1), time.group(3)) == ("descending", "▼")
    # Clicking the sorted column reverses it; another column sorts it largest first.
    assert parse_qs(time.group(2).replace("&amp;", "&")) == {
        "channel": ["slack"],
        "sort": ["time"],
    }
    duration = header(html, "Duration")
    assert duration.group(1) == "none" and duration.group(3) is None
    assert parse_qs(duration.group(2).replace("&amp;", "&"))["sort"] == ["-duration"]

    html = user_client.get("/decisions/?channel=slack&sort=-duration").content.decode()
    duration = header(html, "Duration")
    assert (duration.group(1), duration.group(3)) == ("descending", "▼")
    assert parse_qs(duration.group(2).replace("&amp;", "&"))["sort"] == ["duration"]
    assert header(html, "Time").group(1) == "none"
    assert 'id="sort-label">· longest first<' in html
    # The export links and the run links keep the order.
    assert "/api/decisions/export?format=csv&amp;channel=slack&amp;sort=-duration" in html

    html = user_client.get("/decisions/?sort=urls").content.decode()
    urls = header(html, "URLs")
    assert (urls.group(1), urls.group(3)) == ("ascending", "▲")
    assert parse_qs(urls.group(2).replace("&amp;", "&"))["sort"] == ["-urls"]
    # Back to the default order: no sort parameter at all.
    assert "sort" not in parse_qs(header(html, "Time").group(2))


def test_order_select_offers_every_order(user_client) -> None:
    html = user_client.get("/decisions/?sort=-urls").content.decode()
    select = re.search(r'<select id="filter-sort" name="sort".*?</select>', html, re.S).group(0)
    values = re.findall(r'<option value="([^"]*)"', select)
    assert values == ["", "time", "-duration", "duration", "-urls", "urls"]
    assert '<option value="-urls" selected>most URLs first</option>' in select


@pytest.mark.parametrize(
    "bad", ["size", "-Duration", "duration;drop table", "<script>x</script>", "é" * 3000]
)
def test_unknown_sort_is_a_400_card_naming_the_allowed_values(user_client, bad) -> None:
    make_runs()
    response = user_client.get("/decisions/", {"sort": bad})
    assert response.status_code == 400
    html = response.content.decode()
    assert "These filters cannot be applied" in html
    assert "-time, time, -duration, duration, -urls, urls" in html
    assert "<script>x" not in html
    assert re.search(r'<select id="filter-sort" name="sort" aria-invalid="true"', html)


def test_another_bad_filter_keeps_the_chosen_order_in_the_form(user_client) -> None:
    html = user_client.get("/decisions/?sort=-urls&since=yesterday").content.decode()
    assert '<option value="-urls" selected>most URLs first</option>' in html


def test_nul_in_sort_is_refused_at_the_door(user_client) -> None:
    response = user_client.get("/decisions/", {"sort": "a\x00b"})
    assert response.status_code == 400
    assert "sort: contains a NUL character" in response.content.decode()


def test_detail_prev_next_follow_the_sort(user_client) -> None:
    runs = make_runs()
    order = expected(runs, "-duration")
    middle = order[5]
    html = user_client.get(f"/decisions/{middle}/?sort=-duration").content.decode()
    assert f'href="/decisions/{order[4]}/?sort=-duration">← Previous (longest first)<' in html
    assert f'href="/decisions/{order[6]}/?sort=-duration">Next (longest first) →<' in html
    filters = HistoryFilters.from_params({"sort": "urls"})
    urls_order = expected(runs, "urls")
    run = Run.objects.get(pk=urls_order[0])
    assert decision_neighbours(run=run, filters=filters) == (None, urls_order[1])
    last = Run.objects.get(pk=order[-1])
    assert decision_neighbours(
        run=last, filters=HistoryFilters.from_params({"sort": "-duration"})
    ) == (order[-2], None)


def test_new_runs_banner_counts_from_the_newest_run_whatever_the_order(user_client) -> None:
    runs = make_runs()
    html = user_client.get("/decisions/?sort=urls").content.decode()
    newest = max(runs, key=lambda run: (run.created_at, run.pk)).pk
    assert f'data-top-run-id="{newest}"' in html
