"""Everything the history page shows around its rows: result count and facet counts.

The count stays cheap at a million runs: it stops at ``COUNT_CAP`` ("more than 1,000").
Facet counts (runs per outcome / channel / chat type under the other filters) are grouped
by the database over the newest ``FACET_WINDOW`` matching runs, an index range instead of
three scans of the whole log; beyond that many runs the page says they are the latest ones'
counts. A filter the indexes cannot narrow (a URL fragment in a few percent of the runs, a
derived status) can still make those reads walk much of the log, so on PostgreSQL they get
``HISTORY_COUNTS_BUDGET_MS`` (a setting) for both: past it the page shows its rows with a
lower bound for the count and the choices without counts, and says why; rows that alone
took longer than the budget skip the count at once. A first page that is also the last
counts its rows. SQLite has no such budget. ``bench/history.py`` measures them.

A rare word or URL fragment (on PostgreSQL, ``text_search.planned`` lists its runs: at most
``RARE_MATCHES``) bounds the matches, so the page reads them all once and works the exact
count, the facets, the durations and (newest first) its rows' ids out of that read
(``matched``), with no budget: at 10M runs the page, the count, the facets and the
durations each looked a host and a path's ~2,500 runs up by id in every month's index, and
the facets ran past the budget for most such fragments; the one read takes 35-65 ms there.

With a word or URL fragment the view shows the rows first (``history_rows``: the API's
read, which lists a rare fragment's runs for the newest month only) and asks for the rest
in a second request (``history_page``, without reading the rows again when the count does
not need them): at 10M runs listing a host and a path's runs in every month took 45-70 ms
and reading them 40-65 ms more, before a row was shown.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.db import connections

from common.bounded import budgeted, within
from common.distribution import DurationSummary, summarize_durations
from common.keyset import KeysetPage, keyset_page, page_size_check
from enrichment.models import Run, RunQuerySet
from enrichment.selectors import (
    DEFAULT_SORT,
    SORTS,
    SUMMARY_FIELDS,
    HistoryFilters,
    decision_list,
)
from enrichment.selectors.matched import Choices, MatchedRun, grouped, newest_after
from enrichment.selectors.status import FLAGS, STATUSES, with_media_flag
from enrichment.selectors.text_search import newest_listed, planned

COUNT_CAP = 1000
FACET_LIMIT = 30  # channels beyond the 30 most frequent are left out of the choices
FACET_WINDOW = 5000  # facets count the newest this many matching runs


@dataclass(frozen=True)
class ResultCount:
    count: int  # exact, or a lower bound
    exact: bool

    @property
    def label(self) -> str:
        if self.exact:
            return f"{self.count:,} run{'s' if self.count != 1 else ''}"
        return f"more than {self.count:,} runs"


@dataclass(frozen=True)
class Facet:
    value: str
    count: int


@dataclass(frozen=True)
class HistoryPage:
    page: KeysetPage[Run]
    count: ResultCount
    facets: dict[str, list[Facet]]  # choices with counts, by filter parameter name
    newest_run_id: int  # of the matching runs (what "N new runs" counts from); 0: none
    facet_window: int  # facets count at most this many of the newest matching runs
    counts_skipped: bool = False  # the count or the facets ran past their time budget
    durations: DurationSummary | None = None  # p50/p95 and histogram of the same window
    durations_skipped: bool = False  # the chart's read ran past what the budget had left
    counts_deferred: bool = False  # the rows alone: count, facets and chart read apart

    @property
    def facets_windowed(self) -> bool:
        """Whether more runs match than the facets counted (they count the newest ones)."""
        return not self.count.exact or self.count.count > self.facet_window


def result_count(filters: HistoryFilters) -> ResultCount:
    """Exact up to ``COUNT_CAP``; beyond, only that there are more (a bounded subquery)."""
    found = filters.apply(Run.objects.order_by()).values("pk")[: COUNT_CAP + 1].count()
    return ResultCount(min(found, COUNT_CAP), exact=found <= COUNT_CAP)


# Each facet: its filter (a ``HistoryFilters`` field) and its column in ``_window_groups``.
FACETS = {"outcome": ("outcome", 0), "channel": ("channel", 1), "chatType": ("chat_type", 2)}
STATUS_SUMS = 4  # where a grouping's runs per derived status start (``with_statuses``)


def _window_groups(runs: RunQuerySet, *, with_statuses: bool) -> list[tuple[Any, ...]]:
    """(outcome, lower-cased channel, chat type, runs[, runs per derived status…]) over the
    newest ``FACET_WINDOW`` of ``runs``: one index range grouped by the database, without
    reading the runs twice."""
    columns = ["outcome", "channel", "chat_type"]
    sums = ""
    if with_statuses:
        runs = with_media_flag(runs)
        columns.extend(FLAGS.values())
        sums = "".join(f", SUM(CASE WHEN w.{flag} THEN 1 ELSE 0 END)" for flag in FLAGS.values())
    window = runs.history_order().values(*columns)[:FACET_WINDOW]
    sql, params = window.query.get_compiler(using=runs.db).as_sql()
    with connections[runs.db].cursor() as cursor:
        cursor.execute(
            f"SELECT w.outcome, LOWER(w.channel), w.chat_type, COUNT(*){sums}"
            f" FROM ({sql}) w GROUP BY 1, 2, 3",
            params,
        )
        return [tuple(row) for row in cursor.fetchall()]


def _tally(groups: list[tuple[Any, ...]], column: int) -> list[Facet]:
    counts: Counter[str] = Counter()
    for row in groups:
        value = str(row[column] or "")
        if value:
            counts[value] += row[3]
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [Facet(value, n) for value, n in ranked[:FACET_LIMIT]]


def _status_tally(groups: list[tuple[Any, ...]]) -> list[Facet]:
    return [
        Facet(status, sum(row[STATUS_SUMS + index] or 0 for row in groups))
        for index, status in enumerate(FLAGS)
    ]


def _groups_read(base: HistoryFilters, with_statuses: bool) -> list[tuple[Any, ...]]:
    return _window_groups(base.apply(Run.objects.all()), with_statuses=with_statuses)


def facet_counts(
    filters: HistoryFilters,
    groups: Callable[[HistoryFilters, bool], list[tuple[Any, ...]]] = _groups_read,
) -> dict[str, list[Facet]]:
    """Runs per value of each facet under every *other* filter (so choosing one outcome
    still shows how many the other outcomes have), and per derived status the same way.
    Channels are grouped case-insensitively. Facets whose other filters are the same (all
    of them when none is chosen) are counted in one grouping (``groups``: read by the
    database, or worked out from runs read before)."""
    by_base: dict[HistoryFilters, list[str]] = {}
    for name, (field, _) in FACETS.items():
        cleared: dict[str, Any] = {field: ""}
        base = replace(filters, sort=DEFAULT_SORT, **cleared)
        by_base.setdefault(base, []).append(name)
    by_base.setdefault(replace(filters, sort=DEFAULT_SORT, status=""), []).append("status")
    counts: dict[str, list[Facet]] = {}
    for base, names in by_base.items():
        rows = groups(base, "status" in names)
        for name in names:
            counts[name] = (
                _status_tally(rows) if name == "status" else _tally(rows, FACETS[name][1])
            )
    return counts


def duration_summary(filters: HistoryFilters) -> DurationSummary:
    """p50/p95 and a histogram of the durations of the newest ``FACET_WINDOW`` matching runs
    (one index range, the durations only)."""
    window = filters.apply(Run.objects.all()).history_order()
    durations = window.filter(duration_ms__isnull=False).values_list("duration_ms", flat=True)
    return summarize_durations([value for value in durations[:FACET_WINDOW] if value is not None])


def history_page(
    *, filters: HistoryFilters, cursor: str | None, limit: int, rows: bool = True
) -> HistoryPage:
    """The page: its rows, count, facets and durations. With ``rows=False`` (the counts
    asked for after the rows, ``history_rows``) a rare word's or fragment's rows are not
    read again: its page then holds no rows, and the rest is as with them."""
    # One plan for the rows, the count and the facets (see ``text_search.planned``).
    with planned(filters.q, filters.url) as rare:
        if rare:
            # At most ``RARE_MATCHES`` runs match: one read of them all answers the rest.
            found = _from_matched(filters, cursor=cursor, limit=limit, rows=rows)
            if found is not None:
                return found
        started = time.monotonic()
        page = decision_list(filters=filters, cursor=cursor, limit=limit)
        listed_ms = (time.monotonic() - started) * 1000
        # One time budget for both: the facets get what the count left. A count past it
        # means the facets (five times as many runs to find) would be too.
        started = time.monotonic()
        budget = settings.HISTORY_COUNTS_BUDGET_MS
        count = _counted(filters, page, first=cursor is None, listed_ms=listed_ms, budget=budget)
        left = budget - round((time.monotonic() - started) * 1000)
        facets = within(left, lambda: facet_counts(filters)) if count is not None else None
        left = budget - round((time.monotonic() - started) * 1000)
        durations = within(left, lambda: duration_summary(filters)) if facets is not None else None
        return HistoryPage(
            page=page,
            count=count or _count_from_page(page, first=cursor is None),
            facets=_choices(facets, filters) if facets is not None else {},
            newest_run_id=newest_run_id(filters, page),
            facet_window=FACET_WINDOW,
            counts_skipped=count is None or facets is None,
            durations=durations,
            durations_skipped=durations is None,
        )


def history_rows(*, filters: HistoryFilters, cursor: str | None, limit: int) -> HistoryPage:
    """The page's rows alone, as the API lists them (a rare URL fragment's newest month
    first); its count, facets and durations are read apart (``history_page``). What the
    rows tell of the count is kept: all of it on a first page that is also the last."""
    if filters.sort == DEFAULT_SORT:
        page = decision_list(filters=filters, cursor=cursor, limit=limit)
        newest = newest_run_id(filters, page)  # its first row
    else:
        # One plan for the rows and the newest run, which is looked up apart: unplanned, a
        # host and a path's newest run was found by walking the history (620 ms at 10M runs).
        with planned(filters.q, filters.url):
            page = decision_list(filters=filters, cursor=cursor, limit=limit)
            newest = newest_run_id(filters, page)
    return HistoryPage(
        page=page,
        count=_count_from_page(page, first=cursor is None),
        facets={},
        newest_run_id=newest,
        facet_window=FACET_WINDOW,
        counts_deferred=True,
    )


def _choices_of(filters: HistoryFilters) -> Choices:
    return Choices(filters.outcomes, filters.channels, filters.chat_types, filters.statuses)


def _matched_runs(filters: HistoryFilters) -> list[MatchedRun] | None:
    """Every run matching ``filters`` but its faceted ones, newest first, or None when there
    are more than ``FACET_WINDOW`` (the facets would count the newest ones only)."""
    loosest = replace(filters, outcome="", channel="", chat_type="", status="")
    flags = list(FLAGS.values())
    rows = (
        with_media_flag(loosest.apply(Run.objects.all()))
        .history_order()
        .values_list("id", "created_at", "outcome", "channel", "chat_type", "duration_ms", *flags)
    )[: FACET_WINDOW + 1]
    runs = [
        MatchedRun(
            id=pk,
            created_at=created_at,
            outcome=outcome,
            channel=channel,
            chat_type=chat_type,
            duration_ms=duration_ms,
            statuses=frozenset(status for status, on in zip(FLAGS, on_flags, strict=True) if on),
        )
        for pk, created_at, outcome, channel, chat_type, duration_ms, *on_flags in rows
    ]
    return runs if len(runs) <= FACET_WINDOW else None


def _from_matched(
    filters: HistoryFilters, *, cursor: str | None, limit: int, rows: bool
) -> HistoryPage | None:
    """The page from one read of the matching runs (``matched``): their count, facets and
    durations, and in the default order the ids of the page's rows, which are then read
    alone (in another order the page is read as always; without ``rows``, not at all).
    None when more runs match than that read holds."""
    position = filters.ordering.decode(cursor) if cursor else None
    runs = _matched_runs(filters)
    if runs is None:
        return None
    keep = _choices_of(filters).keep
    kept = [run for run in runs if keep(run)]

    def groups(base: HistoryFilters, with_statuses: bool) -> list[tuple[Any, ...]]:
        keep_base = _choices_of(base).keep
        chosen = [run for run in runs if keep_base(run)]
        return grouped(chosen, statuses=tuple(FLAGS) if with_statuses else ())

    if not rows:
        page_size_check(limit)  # refused as the rows' read would have refused it
        page: KeysetPage[Run] = KeysetPage(items=[], next_cursor=None)
    elif filters.sort == DEFAULT_SORT:
        page = _newest_page(kept, position, cursor=cursor, limit=limit)
    else:
        page = decision_list(filters=filters, cursor=cursor, limit=limit)
    return HistoryPage(
        page=page,
        count=ResultCount(len(kept), exact=True),  # every match was read: no cap needed
        facets=_choices(facet_counts(filters, groups), filters),
        newest_run_id=kept[0].id if kept else 0,
        facet_window=FACET_WINDOW,
        durations=summarize_durations([r.duration_ms for r in kept if r.duration_ms is not None]),
    )


def _newest_page(
    kept: list[MatchedRun], position: tuple[Any, int] | None, *, cursor: str | None, limit: int
) -> KeysetPage[Run]:
    """The newest-first page of ``kept`` after ``position``: its runs read by id."""
    shown = newest_after(kept, position, limit + 1)
    rows = Run.objects.only(*SUMMARY_FIELDS).filter(pk__in=[run.id for run in shown])
    if shown:
        # Their times name the months to look the ids up in (partitioned storage).
        rows = rows.filter(created_at__range=(shown[-1].created_at, shown[0].created_at))
    return keyset_page(
        with_media_flag(rows), cursor=cursor, limit=limit, ordering=SORTS[DEFAULT_SORT]
    )


def _counted(
    filters: HistoryFilters,
    page: KeysetPage[Run],
    *,
    first: bool,
    listed_ms: float,
    budget: int,
) -> ResultCount | None:
    """The result count, or None when it would run past ``budget``.

    A first page that is also the last holds every matching run: its rows are the count.
    Rows that alone took longer than the budget (PostgreSQL) tell that the count would too:
    to reach its cap it reads past the same runs, so it is not started (a fragment of a few
    percent of the URLs spent the whole budget on a count that never finished).
    """
    if first and not page.next_cursor:
        return _count_from_page(page, first=True)
    if listed_ms > budget and budgeted():
        return None
    return within(budget, lambda: result_count(filters))


def _count_from_page(page: KeysetPage[Run], *, first: bool) -> ResultCount:
    """What the rows tell of the count: all of it on a first and last page, else more."""
    return ResultCount(len(page.items), exact=first and not page.next_cursor)


def newest_run_id(filters: HistoryFilters, page: KeysetPage[Run]) -> int:
    """The newest matching run: the first row in the default order, else, for a rare text
    alone, the newest of its listing (inside ``planned``), else one index lookup."""
    if filters.sort == DEFAULT_SORT:
        return page.items[0].pk if page.items else 0
    listed = newest_listed(filters.q, filters.url) if filters.text_alone else None
    if listed is not None:
        return listed
    newest = filters.apply(Run.objects.all()).history_order().values_list("id", flat=True)
    return newest.first() or 0


def _choices(facets: dict[str, list[Facet]], filters: HistoryFilters) -> dict[str, list[Facet]]:
    return {
        "outcome": facet_choices(
            facets["outcome"], values=tuple(Run.Outcome.values), selected=filters.outcomes
        ),
        "status": facet_choices(
            facets.get("status", []), values=tuple(STATUSES), selected=filters.statuses
        ),
        "channel": facet_choices(facets["channel"], values=None, selected=filters.channels),
        "chatType": facet_choices(
            facets["chatType"], values=("direct", "group", "channel"), selected=filters.chat_types
        ),
    }


def facet_choices(
    facets: list[Facet], *, values: tuple[str, ...] | None, selected: tuple[str, ...] | str
) -> list[Facet]:
    """The choices of a filter with their counts: every known value (``values``, zero when
    absent from the data) or the values found, plus each selected one even when it has none."""
    counts = {facet.value: facet.count for facet in facets}
    if values is not None:
        choices = [Facet(value, counts.get(value, 0)) for value in values]
    else:
        choices = list(facets)
    for value in (selected,) if isinstance(selected, str) else selected:
        if value and all(choice.value.lower() != value.lower() for choice in choices):
            choices.append(Facet(value, 0))
    return choices
