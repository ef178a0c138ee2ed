"""The history's text filters, each in a form its database answers from an index.

- ``q`` (full text over the two bodies; link summaries are appended to the enriched one).
  On PostgreSQL it is PostgreSQL's own text search: every word of ``q``, anywhere in the
  run, as a whole word, case-insensitive (``plainto_tsquery`` with the ``simple``
  configuration: no stemming, no stop words, any language; operators in ``q`` are plain
  text, so no input is a syntax error). It reads the stored vector ``body_search`` and its
  GIN index (migration 0009). On SQLite it is a case-insensitive substring, as before.
- ``url`` (part of a URL, case-sensitive substring), the trigram index
  ``urldecision_url_trgm`` on PostgreSQL. A trigram lookup needs three letters or digits
  in a row; shorter fragments are refused on both databases, with the same message (a
  one-letter fragment matches nearly every run; on PostgreSQL it was a one-second scan of
  every URL at a million runs).

Planning (``planned``). PostgreSQL guesses how many runs hold a word it has no statistics
for (a rare one) as 0.5 % of the table, so for a newest-first page it walks the history
index expecting a match every ~200 runs, and for a rare word reads the whole table (or
ANDs in a bitmap of a quarter of the table from another filter's index); and the history
page asks for its rows, its count and three facets, each a new index lookup of the same
rare word or URL fragment. So before those reads, a word or fragment that may be rare
(by the planner's own estimate) has its runs listed once from its index, at most
``RARE_MATCHES``; when that is all of them the reads ask for "one of these runs", which the
planner estimates right. A common one is left as it is: walking the history meets its
runs soon. A URL fragment that is not rare is then written as a test of each run's own
URLs that the planner cannot turn into a join (``HasUrl.common_sql``): its trigram
estimates can be off by 100x (150 for a fragment in 17,000 URLs), and it would then fetch
every match and sort them (290 ms at 1M runs) instead of walking the history and stopping
at the page's last row (16 ms), or walk it with parallel workers (45-55 ms for a fragment
in 0.6 % of the URLs, 19 ms alone).

Listing a rare URL fragment's runs (``url_listings``). The trigram index reads a posting
list per trigram of the fragment and tests the rows in all of them. A word's first letters
("  r", " re" of "/review/…") or a number's first digit are in a tenth of the URLs, a
host's trigrams in an eighth, "example" or "com" in nearly all: at 10M runs such lists were
most of the 40 ms it took to find the one URL holding ``/review/481516`` (its rarest
trigrams alone: 6 ms), and of the 0.6 s for ``docs.example.com/deploy/1``. So the listing
asks the index for a few parts of the fragment (``common.trigrams.index_terms``): those
that narrow the matches in a sample of the stored URLs (PostgreSQL's own statistics of the
column), rarest first, and tests the whole fragment on the URLs found; without a sample, or
when the parts are not rare together, it asks for the fragment. The parts of one word are
rare one by one but always together (the four of "deploy", in one URL of ninety: at 10M
runs 167,000 rows to test, 13 s), so one of them is read and a host's part next (36 ms).
The sample cannot always tell, so that shortcut has ``SHORTCUT_MS`` to answer and
otherwise gives way to the whole fragment.

A newest-first page alone (``newest_first``: the API's list) needs the newest matches
only. On partitioned storage each month's trigram index is read on its own (at 10M runs
over four months, 9 ms each for a host and a path), so a rare fragment's runs are listed a
month at a time from the page's cursor back, and the page is read after each, until it is
full. The history page counts and facets every match, so it lists them all at once.

A page in a duration order (``ranked_first``: longest or shortest first) needs every match's
duration. A rare text's listing holds them (a URL row carries its run's duration, copied when
the run finished), so its runs are ranked there and the page reads the first of them only.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import BooleanField, Exists, Expression, OuterRef, Q, QuerySet, Value
from django.db.models.functions import StrIndex
from django.db.models.sql.compiler import SQLCompiler
from django.utils import timezone

from common.bounded import settings_set_local, within
from common.errors import InvalidInput
from common.trigrams import index_terms
from enrichment.models import Run, UrlDecision
from enrichment.pipeline.retention.partitions import newest_months

MIN_URL_FRAGMENT = 3
# Three letters or digits in a row: what a trigram index can look up (pg_trgm skips all
# else, "_" included); a full-text word needs one.
_INDEXABLE_URL = re.compile(r"[^\W_]{3}")
_WORD = re.compile(r"[^\W_]")
TEXT_CONFIG = "simple"
SEARCH_COLUMN = "body_search"  # PostgreSQL only: migration 0009
# At most this many matching runs (URL rows for a fragment), a word or fragment is "rare":
# the reads look its runs up by id (random reads) and sort them; beyond it, walking the
# history newest first (reads in order) meets a match at least every N / RARE_MATCHES
# runs (every ~200 at 1M runs). Measured at 1M runs, the two cost about the same there.
RARE_MATCHES = 5000
# Listing the runs is tried when the estimate is below this (estimates of a LIKE over URLs
# may be off by 2x) ...
MAYBE_RARE_ESTIMATE = 2 * RARE_MATCHES
# ... or when it is no more than PostgreSQL's guess for a word absent from its statistics,
# at most 0.5 % of the rows (DEFAULT_TS_MATCH_SEL); twice that, since estimates are rounded.
COMMON_WORD_SHARE = 0.01
# A rare fragment's listing weighs its parts (``common.trigrams``) against a sample of at
# most MAX_URL_SAMPLE stored URLs (spread over what the statistics hold), read again after
# URL_SAMPLE_SECONDS.
MAX_URL_SAMPLE = 1000
URL_SAMPLE_SECONDS = 600
# The chosen parts' listing answers within this or gives way to the whole fragment's. At
# 10M runs: 6-8 ms for a rare path (the whole fragment's 45-55 ms), 35-90 ms warm for a
# host and a path (570-720 ms), where the sample could not tell how much the parts
# narrow. At 100 ms a host and a short word (``en.wikipedia.example/on/8``: "/on" reads the
# list of every word starting with "o") gave way in most requests and answered in 1 s.
SHORTCUT_MS = 250
# A newest-first page of a rare URL fragment lists its runs of this many months, a month at
# a time, before every older one (``newest_first``). Each listing costs a statement and a
# read of the page: a fragment in one URL (that no month fills a page of) took 18 -> 30 ms
# p50 at 10M runs with two months and the check for rows without a time on its own.
NEWEST_MONTHS = 1

T = TypeVar("T")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class RareRuns:
    """The runs of a rare text: their ids, and the span of their times when every one is
    known (URL rows stored before they carried the run's time have none) and the runs are
    stored in monthly partitions. Listed for a plan (``planned``, not ``newest_first``), also
    each run's time and duration where its listing holds them (``ranked_first``)."""

    ids: list[int]
    span: tuple[datetime, datetime] | None
    times: dict[int, int] = field(default_factory=dict)  # microseconds since the epoch
    durations: dict[int, int | None] = field(default_factory=dict)


@dataclass(frozen=True)
class _Columns:
    """A listing's columns: the run's id, time and duration, and whether the duration is a
    copy (URL rows: empty on rows stored before it was copied, so unknown) or the run's own
    (empty: the run has none)."""

    run_id: str
    run_time: str
    duration: str
    copied: bool


RUN_COLUMNS = _Columns("pk", "created_at", "duration_ms", copied=False)
URL_COLUMNS = _Columns("run_id", "run_created_at", "run_duration_ms", copied=True)


@dataclass(frozen=True)
class _Plan:
    """Inside ``planned``: the rare filters' runs by (filter name, text), and the filters
    whose listing found them common."""

    rare: dict[tuple[str, str], RareRuns]
    common: frozenset[tuple[str, str]] = frozenset()

    def runs(self, name: str, text: str) -> RareRuns | None:
        return self.rare.get((name, text))

    def is_common(self, name: str, text: str) -> bool:
        return (name, text) in self.common


_PLANNED: ContextVar[_Plan | None] = ContextVar("text_search_planned", default=None)


def url_fragment_problem(fragment: str) -> str | None:
    """Why ``fragment`` cannot be a URL filter, or None (an empty one is no filter)."""
    if not fragment:
        return None
    if len(fragment) < MIN_URL_FRAGMENT:
        return (
            f"URL filter needs at least {MIN_URL_FRAGMENT} characters "
            "(a shorter fragment matches nearly every run)"
        )
    if not _INDEXABLE_URL.search(fragment):
        return (
            f"URL filter needs {MIN_URL_FRAGMENT} letters or digits in a row "
            "(e.g. part of a host name or path)"
        )
    return None


def text_query_problem(query: str) -> str | None:
    """Why ``query`` cannot be a full-text filter, or None."""
    if query and not _WORD.search(query):
        return "full-text search needs a word (letters or digits)"
    return None


def check_text_filters(url: str, q: str) -> None:
    for name, problem in (("url", url_fragment_problem(url)), ("q", text_query_problem(q))):
        if problem:
            raise InvalidInput(f"{name}: {problem}", [name])


class _PlannedCondition(Expression):
    """A run condition that, inside ``planned`` and for a rare text, reads
    ``<run>.id = ANY(<its runs>)`` instead; the run table is named by the alias of the
    query it is compiled in."""

    conditional = True
    output_field = BooleanField()
    name = ""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def as_sql(self, compiler: SQLCompiler, connection: Any) -> tuple[str, list[Any]]:
        table = compiler.quote_name_unless_alias(compiler.query.get_initial_alias())
        plan = _PLANNED.get()
        rare = plan.runs(self.name, self.text) if plan else None
        if rare is not None:
            condition = f"{table}.{connection.ops.quote_name('id')} = ANY(%s)"
            if rare.span is None:
                return condition, [rare.ids]
            # Implied by the ids, but on partitioned storage it names the months to read:
            # ids alone are looked up in every month's index (each read of the page did
            # so, once per month kept).
            created = f"{table}.{connection.ops.quote_name('created_at')}"
            return f"{condition} AND {created} BETWEEN %s AND %s", [rare.ids, *rare.span]
        if plan and plan.is_common(self.name, self.text):
            return self.common_sql(table, compiler, connection)
        return self.condition_sql(table, compiler, connection)

    def condition_sql(
        self, table: str, compiler: SQLCompiler, connection: Any
    ) -> tuple[str, list[Any]]:
        raise NotImplementedError

    def common_sql(
        self, table: str, compiler: SQLCompiler, connection: Any
    ) -> tuple[str, list[Any]]:
        """The condition for a text found common: by default the same."""
        return self.condition_sql(table, compiler, connection)


class BodyMatches(_PlannedCondition):
    """``<run>.body_search @@ plainto_tsquery('simple', q)`` (PostgreSQL only)."""

    name = "q"

    def condition_sql(
        self, table: str, compiler: SQLCompiler, connection: Any
    ) -> tuple[str, list[Any]]:
        column = f"{table}.{connection.ops.quote_name(SEARCH_COLUMN)}"
        return f"{column} @@ plainto_tsquery('{TEXT_CONFIG}'::regconfig, %s)", [self.text]


class HasUrl(_PlannedCondition):
    """Runs with a URL containing the fragment: ``EXISTS`` over their URL decisions."""

    name = "url"

    def __init__(self, text: str, exists: Any = None) -> None:
        super().__init__(text)
        self.exists = exists or Exists(
            UrlDecision.objects.filter(run=OuterRef("pk"), url__contains=text)
        )

    def get_source_expressions(self) -> list[Any]:
        return [self.exists]

    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        (self.exists,) = exprs

    def condition_sql(
        self, table: str, compiler: SQLCompiler, connection: Any
    ) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(self.exists)
        return sql, list(params)

    def common_sql(
        self, table: str, compiler: SQLCompiler, connection: Any
    ) -> tuple[str, list[Any]]:
        # ``OFFSET 0`` keeps PostgreSQL from turning the EXISTS into a join: it stays a
        # test of each run's own URLs (their run_id index), and as the planner cannot
        # estimate it, it takes half the runs to match and walks the history's order.
        # The run's time (copied onto its URL rows) lets partitioned storage look in the
        # run's own month only (run-time pruning): without it each run walked was looked
        # up in every month's run_id index, so the cost grew with the months kept (117,000
        # buffers for a page of a fragment in 0.6 % of the URLs at 1M runs, 35,000 with).
        # Rows stored before the column existed have none (the default partition).
        quote = connection.ops.quote_name
        urls = quote(UrlDecision._meta.db_table)
        run_time = quote("run_created_at")
        return (
            f"EXISTS(SELECT 1 FROM {urls} u WHERE u.{quote('run_id')} = {table}.{quote('id')}"
            f" AND (u.{run_time} = {table}.{quote('created_at')} OR u.{run_time} IS NULL)"
            f" AND strpos(u.{quote('url')}, %s) > 0 OFFSET 0)",
            [self.text],
        )


def body_text_condition(query: str, vendor: str) -> Q | BodyMatches:
    """Runs whose bodies hold ``query``: full text on PostgreSQL, a substring elsewhere."""
    if vendor == "postgresql":
        return BodyMatches(query)
    return Q(original_body__icontains=query) | Q(enriched_body__icontains=query)


def url_condition(fragment: str) -> HasUrl:
    """Runs with a URL containing ``fragment`` (on PostgreSQL: the URL trigram index)."""
    return HasUrl(fragment)


_URL_SAMPLES: dict[str, tuple[float, list[str]]] = {}  # database alias → (until, sample)


def url_sample(using: str = DEFAULT_DB_ALIAS) -> list[str]:
    """Stored URLs, lower case, as PostgreSQL's statistics keep them (each table's or
    month's most common values and histogram bounds, which ANALYZE refreshes; at most
    ``MAX_URL_SAMPLE``), read at most once per ``URL_SAMPLE_SECONDS`` in a process."""
    now = time.monotonic()
    cached = _URL_SAMPLES.get(using)
    if cached and cached[0] > now:
        return cached[1]
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT lower(value) FROM pg_stats AS s"
            " CROSS JOIN unnest(COALESCE(s.most_common_vals::text::text[], '{}')"
            " || COALESCE(s.histogram_bounds::text::text[], '{}')) AS value"
            " WHERE s.schemaname = current_schema() AND s.attname = 'url' AND (s.tablename = %s"
            " OR s.tablename IN (SELECT c.relname FROM pg_partition_tree(%s::regclass) AS t"
            " JOIN pg_class AS c ON c.oid = t.relid))",  # no rows for a plain table
            [UrlDecision._meta.db_table] * 2,
        )
        held = [value for (value,) in cursor.fetchall()]
    sample = held[:: max(1, math.ceil(len(held) / MAX_URL_SAMPLE))]  # every k-th
    _URL_SAMPLES[using] = (now + URL_SAMPLE_SECONDS, sample)
    return sample


def url_listings(fragment: str, using: str = DEFAULT_DB_ALIAS) -> list[QuerySet[UrlDecision]]:
    """The URL rows holding ``fragment``, as the listing tries them: first written for the
    trigram index to read a few of the fragment's parts only (``index_terms``; the fragment
    itself tested on the rows found by ``strpos``, which no index answers) when it has
    them, then the fragment as it is."""
    urls = UrlDecision.objects.using(using)
    whole = urls.filter(url__contains=fragment)
    terms = index_terms(fragment, url_sample(using))
    if not terms:
        return [whole]
    rarest = (
        urls.filter(*[Q(url__contains=term) for term in terms])
        .alias(at=StrIndex("url", Value(fragment)))
        .filter(at__gt=0)
    )
    return [rarest, whole]


def _estimated_rows(rows: QuerySet[Any]) -> float:
    """The planner's row estimate for ``rows`` (an EXPLAIN, nothing is read)."""
    plan = json.loads(rows.order_by().values("pk").explain(format="json"))
    return float(plan[0]["Plan"]["Plan Rows"])


def _maybe_rare(rows: QuerySet[Any], table_rows: float) -> bool:
    """Whether the matches ``rows`` of a text filter may be rare: PostgreSQL's estimate is
    small, or no more than the guess it makes for a word it has no statistics for (the
    list from the index is bounded: at worst ``RARE_MATCHES`` rows read for nothing)."""
    estimate = _estimated_rows(rows)
    return estimate <= MAYBE_RARE_ESTIMATE or estimate / max(table_rows, 1.0) <= COMMON_WORD_SHARE


@dataclass(frozen=True)
class _Listed:
    """What a listing of one filter's matching rows found (``_summed``)."""

    matches: int  # rows, up to RARE_MATCHES + 1
    timed: int  # of them, rows with a run time
    first: datetime | None
    last: datetime | None
    ids: list[int] | None  # the distinct run ids, when matches <= RARE_MATCHES
    # With ``per_run``: each run's time (microseconds since the epoch: 2,500 times parsed
    # as datetimes took 30 ms) and duration, in the order of ``ids``.
    times: list[int | None] | None = None
    durations: list[int | None] | None = None

    def runs(self, columns: _Columns) -> RareRuns:
        """Its runs; their span of times when every row has one; the times and durations
        known (a copied duration that is empty is not)."""
        ids = list(self.ids or [])
        times = {
            run: time for run, time in zip(ids, self.times or [], strict=False) if time is not None
        }
        durations = {
            run: duration
            for run, duration in zip(ids, self.durations or [], strict=False)
            if duration is not None or not columns.copied
        }
        if self.first is None or self.last is None or self.timed != self.matches:
            return RareRuns(ids, None, times, durations)
        return RareRuns(ids, (self.first, self.last), times, durations)


# Listings read the text indexes only: bounded work whatever the text.
INDEX_ONLY = {"enable_seqscan": "off", "enable_indexscan": "off"}


@contextmanager
def _index_reads(using: str) -> Iterator[None]:
    """A transaction where only the text indexes can answer (``INDEX_ONLY``); inside an outer
    transaction, the settings are put back after it."""
    nested = connections[using].in_atomic_block
    with transaction.atomic(using=using):
        previous = settings_set_local(using, INDEX_ONLY, keep=nested)
        yield
        if nested:
            settings_set_local(using, previous)


def _shortcut(
    tried: list[QuerySet[Any]], columns: _Columns, per_run: bool, using: str
) -> tuple[Any, ...] | None:
    """The first of the ways a filter's rows are tried but the last (the shortcuts) that
    answers within ``SHORTCUT_MS``, summed up; None when none does. Each in a transaction of
    its own (``INDEX_ONLY``)."""
    for rows in tried[:-1]:
        summary = within(
            SHORTCUT_MS, partial(_summed, rows, columns, per_run), using, settings=INDEX_ONLY
        )
        if summary is not None:
            return summary
    return None


def _listed(
    listings: list[tuple[list[QuerySet[Any]], _Columns]], using: str, *, per_run: bool = False
) -> list[_Listed]:
    """Each filter's matching rows (its ways as they are tried, its columns), summed up: by
    a shortcut, or else by the last way, the filters that need it read together in one
    transaction. ``per_run``: with each run's time and duration."""
    shortcuts = [_shortcut(tried, columns, per_run, using) for tried, columns in listings]

    def summed() -> list[_Listed]:
        return [
            _Listed(*(_summed(tried[-1], columns, per_run) if summary is None else summary))
            for summary, (tried, columns) in zip(shortcuts, listings, strict=True)
        ]

    if all(summary is not None for summary in shortcuts):
        return summed()
    with _index_reads(using):
        return summed()


def _rare_runs(
    candidates: dict[str, tuple[list[QuerySet[Any]], _Columns]], using: str
) -> dict[str, RareRuns]:
    """For each filter (name → its matching rows as they are tried, and their columns), its
    runs when there are at most ``RARE_MATCHES``, read from the filter's own index alone,
    with each run's time and duration."""
    listed = _listed(list(candidates.values()), using, per_run=True)
    return {
        name: found.runs(columns)
        for (name, (_, columns)), found in zip(candidates.items(), listed, strict=True)
        if found.matches <= RARE_MATCHES
    }


def _summed(rows: QuerySet[Any], columns: _Columns, per_run: bool = False) -> tuple[Any, ...]:
    """(matches up to ``RARE_MATCHES`` + 1, how many have a run time, the first and last
    run time, the run ids when rare[, with ``per_run`` each one's time and duration]) of
    ``rows``. Summed up by the database: a common text's 5,001 rows are not sent over to be
    parsed and dropped (that cost more than reading them from the index)."""
    listed = rows.order_by().values_list(columns.run_id, columns.run_time, columns.duration)
    sql, params = listed[: RARE_MATCHES + 1].query.get_compiler(using=rows.db).as_sql()
    rare = "CASE WHEN SUM(g.n) <= %s THEN ARRAY_AGG({} ORDER BY g.run_id) END"
    arrays = [rare.format("g.run_id")]
    if per_run:
        micros = "(EXTRACT(EPOCH FROM g.last) * 1000000)::bigint"
        arrays += [rare.format(micros), rare.format("g.duration")]
    with connections[rows.db].cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE(SUM(g.n), 0)::int, COALESCE(SUM(g.timed), 0)::int, MIN(g.first),"
            f" MAX(g.last), {', '.join(arrays)} FROM (SELECT s.run_id, COUNT(*) AS n,"
            " COUNT(s.run_time) AS timed, MIN(s.run_time) AS first, MAX(s.run_time) AS last,"
            f" MAX(s.duration) AS duration FROM ({sql}) AS s(run_id, run_time, duration)"
            " GROUP BY s.run_id) AS g",
            [*[RARE_MATCHES] * len(arrays), *params],
        )
        return tuple(cursor.fetchone())


def _run_table(using: str) -> tuple[float, bool]:
    """(the planner's count of runs, whether they are stored in monthly partitions)."""
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT reltuples, relkind = 'p' FROM pg_class WHERE oid = %s::regclass",
            [Run._meta.db_table],
        )
        reltuples, partitioned = cursor.fetchone()
    return float(reltuples), bool(partitioned)


def _url_rows(url: str, using: str) -> QuerySet[UrlDecision]:
    return UrlDecision.objects.using(using).filter(url__contains=url)


def _plan(q: str, url: str, using: str, table: tuple[float, bool] | None = None) -> _Plan:
    table_rows, partitioned = table or _run_table(using)
    texts = {"q": q, "url": url}
    candidates: dict[str, tuple[list[QuerySet[Any]], _Columns]] = {}
    if q:
        words = Run.objects.using(using).filter(BodyMatches(q))
        if _maybe_rare(words, table_rows):
            candidates["q"] = ([words], RUN_COLUMNS)
    if url and _maybe_rare(_url_rows(url, using), table_rows):
        candidates["url"] = (url_listings(url, using), URL_COLUMNS)
    runs = _rare_runs(candidates, using) if candidates else {}
    # The span of times only picks months: on one table it could make the planner read a
    # range of the history index instead of looking the few ids up.
    rare = {
        (name, texts[name]): found if partitioned else replace(found, span=None)
        for name, found in runs.items()
    }
    # A URL fragment that is not rare is walked for (see the module's docstring).
    common = frozenset([("url", url)]) if url and ("url", url) not in rare else frozenset()
    return _Plan(rare, common)


@contextmanager
def _in_effect(plan: _Plan) -> Iterator[None]:
    token = _PLANNED.set(plan)
    try:
        yield
    finally:
        _PLANNED.reset(token)


def _plannable(q: str, url: str, using: str) -> bool:
    """Whether there is something to plan: a filter, on PostgreSQL, outside any plan."""
    vendor = connections[using].vendor
    return bool(q or url) and vendor == "postgresql" and _PLANNED.get() is None


@contextmanager
def planned(
    q: str, url: str = "", using: str = DEFAULT_DB_ALIAS
) -> Iterator[frozenset[str] | None]:
    """Run the history reads inside this block with a plan fit for how rare the word(s)
    ``q`` and the URL fragment ``url`` are (see the module's docstring). Yields the names of
    the filters found rare (``{"q"}``, ``{"q", "url"}`` …), or None when there is nothing to
    plan (neither filter, or not PostgreSQL) or an outer block planned already. Evaluate
    the querysets inside the block."""
    if not _plannable(q, url, using):
        yield None
        return
    plan = _plan(q, url, using)
    with _in_effect(plan):
        yield frozenset(name for name, _ in plan.rare)


def newest_first(
    read: Callable[[], T],
    full: Callable[[T], bool],
    *,
    q: str,
    url: str,
    upper: datetime | None,
    using: str = DEFAULT_DB_ALIAS,
) -> T:
    """``read()``, a newest-first page of the history at or before ``upper`` (its cursor's
    time; None: the first page), under the plan of ``planned``.

    A rare URL fragment (alone: no ``q``) on partitioned storage has its runs listed a month
    at a time, newest first (``NEWEST_MONTHS``, then every older one), and the page is read
    after each: once it is ``full`` (a run after its last row proves it) it is the page of
    every month, as the runs of older months are all older than the ones listed. The
    listing of every month read each month's trigram index (9 ms each at 10M runs over four
    months) for a page the newest month filled.
    """
    if not _plannable(q, url, using):
        return read()
    table = _run_table(using)
    if not q and table[1]:  # partitioned
        for plan, final in _newest_months(url, upper, table[0], using):
            with _in_effect(plan):
                page = read()
            if final or full(page):
                return page
    with _in_effect(_plan(q, url, using, table)):
        return read()


# A page in a duration order is read from its first ``limit + 1`` candidates, then from this
# many times more at each try (``ranked_first``).
RANKED_GROWTH = 4


def ranked_first(
    read: Callable[[], T],
    full: Callable[[T], bool],
    *,
    q: str,
    url: str,
    order: Callable[[dict[int, int | None]], list[int]],
    limit: int,
    using: str = DEFAULT_DB_ALIAS,
) -> T:
    """``read()``, a page of the history in a duration order, under the plan of ``planned``
    (the one in effect, or its own).

    A rare text's listing holds its runs' durations (a URL row carries its run's; one stored
    before it did is looked up). ``order`` puts them in the page's order after its cursor
    (run ids), and the page is read from the first ``limit + 1`` of those runs alone, then
    ``RANKED_GROWTH`` times more, until it is ``full`` or every run was read: once full, no
    run further down the order can come before its rows. At 10M runs reading the ~2,500 runs
    of a host and a path to sort them took 40-65 ms; their first 51 take a few.
    """
    plan = _PLANNED.get()
    if plan is None:
        if not _plannable(q, url, using):
            return read()
        plan = _plan(q, url, using)
    key, runs = _ranked_text(plan, q, url, using)
    if runs is None:
        with _in_effect(plan):
            return read()
    ranked = order(runs.durations)
    size = limit + 1
    while True:
        chunk = ranked[:size]
        times = [runs.times[run] for run in chunk if run in runs.times]
        span = None
        if runs.span and times and len(times) == len(chunk):
            span = (_from_micros(min(times)), _from_micros(max(times)))
        narrowed = _Plan({**plan.rare, key: RareRuns(sorted(chunk), span)}, plan.common)
        with _in_effect(narrowed):
            page = read()
        if full(page) or size >= len(ranked):
            return page
        size *= RANKED_GROWTH


def _from_micros(micros: int) -> datetime:
    return EPOCH + timedelta(microseconds=micros)


def _ranked_text(
    plan: _Plan, q: str, url: str, using: str
) -> tuple[tuple[str, str], RareRuns | None]:
    """The rare text of ``plan`` whose runs are the fewest, with every run's duration (the
    durations its listing lacked read from the runs); None when neither text is rare."""
    found = [(key, runs) for key in (("q", q), ("url", url)) if (runs := plan.rare.get(key))]
    if not found:
        return ("", ""), None
    key, runs = min(found, key=lambda item: len(item[1].ids))
    missing = [run for run in runs.ids if run not in runs.durations]
    if missing:
        rows = Run.objects.using(using).filter(pk__in=missing)
        if runs.span:
            rows = rows.filter(created_at__range=runs.span)
        durations = {**runs.durations, **dict(rows.values_list("pk", "duration_ms"))}
        runs = replace(runs, durations=durations)
    return key, runs


def newest_listed(q: str, url: str) -> int | None:
    """The newest run (by time, then id) of the one rare text of the plan in effect, from
    its listing; None when there is no such plan, or some of its runs' times are unknown."""
    plan = _PLANNED.get()
    found = [plan.rare.get(key) for key in (("q", q), ("url", url)) if key[1]] if plan else []
    if len(found) != 1 or found[0] is None:
        return None
    runs = found[0]
    if len(runs.times) != len(runs.ids):
        return None
    return max(runs.ids, key=lambda run: (runs.times[run], run), default=0)


def _newest_months(
    url: str, upper: datetime | None, table_rows: float, using: str
) -> Iterator[tuple[_Plan, bool]]:
    """Plans for ``url`` whose runs are listed for the newest months (from ``upper``, or the
    newest run, back), each with whether it holds every month; one plan when the fragment
    is not rare (its runs are walked for, as ``planned`` does). None when some of its URL
    rows have no run time (they could be of any month)."""
    if not _maybe_rare(_url_rows(url, using), table_rows):
        yield _Plan({}, frozenset([("url", url)])), True
        return
    tried = url_listings(url, using)
    # From the month of the newest run (one probe of each month's history index), not of
    # today: a log whose newest runs are older lists no empty months first.
    newest = Run.objects.using(using).history_order().values_list("created_at", flat=True)
    anchor = upper or newest.first() or timezone.now()
    matches, ids = 0, []
    firsts: list[datetime] = []
    lasts: list[datetime] = []
    bounds = newest_months(anchor, NEWEST_MONTHS)
    for index, (since, before) in enumerate(bounds):
        # The first listing also finds URL rows without a run time (the default partition).
        window = [_in_months(rows, since, before, upper, untimed=index == 0) for rows in tried]
        (listed,) = _listed([(window, URL_COLUMNS)], using)
        matches += listed.matches
        if matches > RARE_MATCHES:
            yield _Plan({}, frozenset([("url", url)])), True  # common after all
            return
        if listed.timed != listed.matches:
            return  # rows of runs of any month: the fragment is listed whole
        ids.extend(listed.ids or [])
        if listed.first is not None and listed.last is not None:
            firsts.append(listed.first)
            lasts.append(listed.last)
        span = (min(firsts), max(lasts)) if firsts else None
        yield _Plan({("url", url): RareRuns(list(ids), span)}), index == len(bounds) - 1


def _in_months(
    rows: QuerySet[UrlDecision],
    since: datetime | None,
    before: datetime | None,
    upper: datetime | None,
    *,
    untimed: bool,
) -> QuerySet[UrlDecision]:
    """The URL rows of runs from ``since`` to ``before`` (open ends: None), none after
    ``upper``; and the rows without a run time when ``untimed``."""
    window = Q()
    for bound, lookup in ((since, "gte"), (before, "lt"), (upper, "lte")):
        if bound is not None:
            window &= Q(**{f"run_created_at__{lookup}": bound})
    if untimed and window:
        window |= Q(run_created_at__isnull=True)
    return rows.filter(window)
