"""Reads: the decision-log selectors here (history pages with keyset paging, one run, export
chunks, neighbours); the other read models beside them — ``stats`` (overview), ``explain``,
``tool_access``, ``records`` (a run's API record), ``exports``, ``history_page`` (count and
facets), ``run_config`` (a run's config against today's)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from functools import partial

from django.db import connections
from django.db.models import Exists, OuterRef, Prefetch, Q
from django.db.models.functions import Upper
from django.http import QueryDict
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from common.errors import InvalidInput, NotFound
from common.json_guard import text_problem
from common.keyset import (
    DEFAULT_PAGE_SIZE,
    SORT_KEY,
    KeysetPage,
    Ordering,
    datetime_ordering,
    keyset_page,
)
from enrichment.models import (
    DURATION_LONGEST_FIRST,
    DURATION_SHORTEST_FIRST,
    NO_DURATION_LONGEST_FIRST,
    NO_DURATION_SHORTEST_FIRST,
    Attempt,
    Run,
    RunQuerySet,
    UrlDecision,
)
from enrichment.selectors.matched import ranked_after
from enrichment.selectors.status import STATUSES, status_condition, with_media_flag
from enrichment.selectors.text_search import (
    body_text_condition,
    check_text_filters,
    newest_first,
    planned,
    ranked_first,
    url_condition,
)

# Shortest session-key fragment for a "contains" match (a trigram index needs three).
MIN_CONTAINS = 3
SUMMARY_FIELDS = (
    "id",
    "created_at",
    "channel",
    "chat_type",
    "session_key",
    "agent_id",
    "outcome",
    "url_count",
    "duration_ms",
    "redacted_at",
    "attempts_failed",
    "fallback_used",
    "dns_failed",
)

# The history's orders (``sort`` parameter): time (the default, newest first), duration and
# URL count, each both ways, the run id breaking ties. A run without a duration (running,
# interrupted) sorts last both ways; the duration keys are the expressions of the indexes
# ``run_duration_longest``/``run_duration_shortest`` (migration 0008): page 1 of any order is an
# index scan, not a sort of every matching run.
DEFAULT_SORT = "-time"
SORTS: dict[str, Ordering] = {
    "-time": datetime_ordering("-time", "created_at", descending=True, legacy=True),
    "time": datetime_ordering("time", "created_at", descending=False),
    "-duration": Ordering("-duration", DURATION_LONGEST_FIRST, descending=True),
    "duration": Ordering("duration", DURATION_SHORTEST_FIRST, descending=False),
    "-urls": Ordering("-urls", "url_count", descending=True),
    "urls": Ordering("urls", "url_count", descending=False),
}
# The duration orders: the key of a run without a duration (as in their expressions).
DURATION_SORTS = {"-duration": NO_DURATION_LONGEST_FIRST, "duration": NO_DURATION_SHORTEST_FIRST}


# Filters that take several values (``?outcome=success&outcome=skipped``, or one parameter
# ``outcome=success,skipped``): any of them matches. Kept as one comma-joined string so a
# filter set stays a small hashable value and its query string stays short.
MULTI_VALUED = ("outcome", "status", "channel", "chatType")
MAX_VALUES = 30
# Time presets (``range``): the start moves with the clock, so a link to "the last 24 h"
# still means that tomorrow; "custom" is ``since``/``until``.
RANGES = {
    "1h": timedelta(hours=1),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}


def query_params(query: QueryDict) -> dict[str, str]:
    """A request's ``QueryDict`` as the flat dict the filters read: the multi-valued filters
    joined with commas (blank values dropped), any other parameter's last value."""
    params: dict[str, str] = {}
    for name, values in query.lists():
        if name in MULTI_VALUED:
            params[name] = ",".join(v.strip() for v in values if v.strip())
        elif values:
            params[name] = values[-1]
    return params


def split_values(raw: str) -> tuple[str, ...]:
    """``"success, skipped,success"`` -> ``("success", "skipped")`` (order kept, no repeats)."""
    return tuple(dict.fromkeys(value.strip() for value in raw.split(",") if value.strip()))


@dataclass(frozen=True)
class HistoryFilters:
    outcome: str = ""
    channel: str = ""
    chat_type: str = ""
    session_key: str = ""
    url: str = ""
    q: str = ""
    since: datetime | None = None
    until: datetime | None = None
    status: str = ""
    session_match: str = "prefix"  # or "contains", or "exact" (the sessions view)
    command: str = ""  # runs where this CLI entry failed an attempt
    sort: str = DEFAULT_SORT  # one of SORTS: the order of the list, not which runs match
    range: str = ""  # one of RANGES: ``since`` is that long before now, ``until`` unset

    @property
    def outcomes(self) -> tuple[str, ...]:
        return split_values(self.outcome)

    @property
    def statuses(self) -> tuple[str, ...]:
        return split_values(self.status)

    @property
    def channels(self) -> tuple[str, ...]:
        return split_values(self.channel)

    @property
    def chat_types(self) -> tuple[str, ...]:
        return split_values(self.chat_type)

    @property
    def text_alone(self) -> bool:
        """Whether the only filters are the text ones (``q``, ``url``), in any order."""
        return replace(self, url="", q="", sort=DEFAULT_SORT, session_match="prefix") == (
            HistoryFilters()
        )

    @property
    def ordering(self) -> Ordering:
        return SORTS[self.sort]

    @classmethod
    def from_params(cls, params: dict[str, str]) -> HistoryFilters:
        """Read filters from query parameters (API or dashboard), refusing bad values by name."""
        outcomes = split_values(params.get("outcome", ""))
        for value in outcomes:
            if value not in Run.Outcome.values:
                raise InvalidInput(
                    f"outcome: unknown outcome {value!r} (one of {', '.join(Run.Outcome.values)})"
                )
        statuses = split_values(params.get("status", ""))
        for value in statuses:
            if value not in STATUSES:
                raise InvalidInput(
                    f"status: unknown status {value!r} (one of {', '.join(STATUSES)})"
                )
        outcome, status = ",".join(outcomes), ",".join(statuses)
        values: dict[str, object] = {
            "outcome": outcome,
            "status": status,
            "channel": ",".join(split_values(params.get("channel", ""))),
            "chat_type": ",".join(
                split_values(params.get("chatType") or params.get("chat_type") or "")
            ),
            "session_key": (params.get("sessionKey") or params.get("session_key") or "").strip(),
            "url": params.get("url", "").strip(),
            "q": params.get("q", "").strip(),
        }
        for name, raw in params.items():
            problem = text_problem(raw)
            if problem is not None:
                raise InvalidInput(f"{name}: {problem}", [name])
        for name in ("since", "until"):
            raw = params.get(name, "").strip()
            values[name] = parse_instant(name, raw) if raw else None
        time_range = params.get("range", "").strip()
        if time_range and time_range not in RANGES:
            raise InvalidInput(f"range: unknown range {time_range!r} (one of {', '.join(RANGES)})")
        if time_range:
            values["since"] = timezone.now() - RANGES[time_range]
            values["until"] = None
        values["range"] = time_range
        for name in ("outcome", "status", "channel", "chat_type"):
            if len(split_values(str(values[name]))) > MAX_VALUES:
                raise InvalidInput(f"{name}: at most {MAX_VALUES} values")
        if values["since"] and values["until"] and values["until"] <= values["since"]:  # type: ignore[operator]
            raise InvalidInput("until: must be later than since (this range holds no runs)")
        session_match = (params.get("sessionMatch") or "prefix").strip()
        if session_match not in ("prefix", "contains", "exact"):
            raise InvalidInput("sessionMatch: one of prefix, contains, exact")
        if session_match == "contains" and 0 < len(values["session_key"]) < MIN_CONTAINS:  # type: ignore[arg-type]
            raise InvalidInput(
                f"sessionKey: 'contains' needs at least {MIN_CONTAINS} characters "
                "(a shorter fragment cannot use an index; use 'starts with')"
            )
        values["session_match"] = session_match
        values["command"] = params.get("command", "").strip()
        values["sort"] = parse_sort(params.get("sort", ""))
        for name in ("channel", "chat_type", "session_key", "url", "q", "command"):
            if len(str(values[name])) > 500:
                raise InvalidInput(f"{name}: filter longer than 500 characters")
        check_text_filters(str(values["url"]), str(values["q"]))
        return cls(**values)  # type: ignore[arg-type]

    def as_params(self) -> dict[str, str]:
        names = {
            "chat_type": "chatType",
            "session_key": "sessionKey",
            "session_match": "sessionMatch",
        }
        params: dict[str, str] = {}
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name == "session_match" and (value == "prefix" or not self.session_key):
                continue  # the default, or meaningless without a session key
            if field.name == "sort" and value == DEFAULT_SORT:
                continue
            if field.name in ("since", "until") and self.range:
                continue  # the preset says it, and keeps saying it as time passes
            if value:
                params[names.get(field.name, field.name)] = (
                    value.isoformat() if isinstance(value, datetime) else value
                )
        return params

    def apply(self, runs: RunQuerySet) -> RunQuerySet:
        # One value is an equality (the indexes' leading column); several are any-of.
        outcomes, statuses = self.outcomes, self.statuses
        channels, chat_types = self.channels, self.chat_types
        if len(outcomes) == 1:
            runs = runs.filter(outcome=outcomes[0])
        elif outcomes:
            runs = runs.filter(outcome__in=outcomes)
        if statuses:
            any_status = Q()
            for status in statuses:
                any_status |= status_condition(status)
            runs = runs.filter(any_status)
        if len(channels) == 1:
            runs = runs.filter(channel__iexact=channels[0])
        elif channels:
            runs = runs.alias(channel_upper=Upper("channel")).filter(
                channel_upper__in=[channel.upper() for channel in channels]
            )
        if len(chat_types) == 1:
            runs = runs.filter(chat_type=chat_types[0])
        elif chat_types:
            runs = runs.filter(chat_type__in=chat_types)
        if self.session_key and self.session_match == "exact":
            # The sessions view: every run of one conversation (the session-key index).
            runs = runs.filter(session_key=self.session_key)
        elif self.session_key and self.session_match == "contains":
            runs = runs.filter(session_key__icontains=self.session_key)
        elif self.session_key:
            runs = runs.filter(session_key__startswith=self.session_key)
        if self.command:
            failed = Attempt.objects.filter(
                url_decision__run=OuterRef("pk"), command=self.command, outcome="failed"
            )
            runs = runs.filter(Exists(failed))
        if self.since:
            runs = runs.filter(created_at__gte=self.since)
        if self.until:
            runs = runs.filter(created_at__lt=self.until)
        if self.url:
            runs = runs.filter(url_condition(self.url))
        if self.q:
            runs = runs.filter(body_text_condition(self.q, connections[runs.db].vendor))
        return runs


def parse_sort(raw: str) -> str:
    """A ``sort`` parameter: one of ``SORTS`` (empty: newest first); anything else is refused
    naming the allowed values."""
    value = raw.strip()
    if not value:
        return DEFAULT_SORT
    if value not in SORTS:
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise InvalidInput(f"sort: unknown order {shown!r} (one of {', '.join(SORTS)})", ["sort"])
    return value


def parse_instant(name: str, raw: str) -> datetime:
    """An ISO 8601 instant; one without an offset is read as UTC (what the forms say)."""
    value = parse_datetime(raw)
    if value is None:
        try:
            value = datetime.fromisoformat(raw)
        except ValueError:
            raise InvalidInput(f"{name}: not an ISO 8601 date/time: {raw!r}") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


def decision_list(
    *, filters: HistoryFilters, cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
) -> KeysetPage[Run]:
    """One page of runs in the filters' order (newest first by default); the cursor points
    after the last run shown."""
    runs = with_media_flag(filters.apply(Run.objects.only(*SUMMARY_FIELDS)))

    def read() -> KeysetPage[Run]:
        if len(filters.statuses) > 1 and connections[runs.db].vendor == "postgresql":
            return _any_status_page(filters, cursor=cursor, limit=limit)
        return keyset_page(runs, cursor=cursor, limit=limit, ordering=filters.ordering)

    def full(page: KeysetPage[Run]) -> bool:
        return page.next_cursor is not None  # a run after its last row proves it

    position = filters.ordering.decode(cursor) if cursor else None
    texts = {"q": filters.q, "url": filters.url, "using": runs.db}
    if filters.sort == DEFAULT_SORT:
        # The page needs the newest matching runs only (a rare URL fragment's are listed
        # month by month, see ``text_search.newest_first``).
        upper = position[0] if position else None
        return newest_first(read, full, upper=upper, **texts)
    if filters.sort in DURATION_SORTS:
        # A rare text's runs are put in this order from its listing; the page reads the
        # first of them (see ``text_search.ranked_first``).
        order = partial(
            ranked_after,
            none_as=DURATION_SORTS[filters.sort],
            descending=filters.ordering.descending,
            position=position,
        )
        return ranked_first(read, full, order=order, limit=limit, **texts)
    with planned(filters.q, filters.url, runs.db):
        return read()


def _any_status_page(filters: HistoryFilters, *, cursor: str | None, limit: int) -> KeysetPage[Run]:
    """A page of runs with any of several derived statuses: one page per status, merged.

    Each status alone is read newest first from its own partial index and stops at the
    page's end. Their OR was planned as a bitmap of every run with any of them (ANDed with
    e.g. the whole outcome index for ``&outcome=skipped``) in every month, then sorted: a
    cost that grew with the log (321 ms p95 at 10M runs). The first ``limit`` runs of the
    union are among the first ``limit`` of the status each has, so the merge is exact.
    """
    ordering = filters.ordering
    pages = [
        keyset_page(
            with_media_flag(
                replace(filters, status=status).apply(Run.objects.only(*SUMMARY_FIELDS))
            ),
            cursor=cursor,
            limit=limit,
            ordering=ordering,
        )
        for status in filters.statuses
    ]
    runs = {run.pk: run for page in pages for run in page.items}
    merged = sorted(
        runs.values(),
        key=lambda run: (getattr(run, SORT_KEY), run.pk),
        reverse=ordering.descending,
    )
    # A status with more than a page means more runs even when the union fills one exactly.
    has_more = len(merged) > limit or any(page.next_cursor for page in pages)
    items = merged[:limit]
    return KeysetPage(
        items=items, next_cursor=ordering.encode(items[-1]) if has_more and items else None
    )


def decision_get(*, run_id: int) -> Run:
    """A run with its URL decisions and attempts (three queries whatever the size)."""
    attempts = Prefetch("attempts", queryset=Attempt.objects.order_by("position"))
    urls = Prefetch(
        "url_decisions",
        queryset=UrlDecision.objects.order_by("position").prefetch_related(attempts),
    )
    run = Run.objects.prefetch_related(urls).filter(pk=run_id).first()  # type: ignore[arg-type]
    if run is None:
        raise NotFound(f"No run with id {run_id}.")
    return run


def decision_neighbours(*, run: Run, filters: HistoryFilters) -> tuple[int | None, int | None]:
    """(previous run id, next run id) within the filtered history in its order (newest
    first: the newer and the older run), for the detail page's prev/next links."""
    ordering = filters.ordering
    base = filters.apply(Run.objects.all())
    with planned(filters.q, filters.url, base.db):
        return _neighbours(base, run, ordering)


def _neighbours(base: RunQuerySet, run: Run, ordering: Ordering) -> tuple[int | None, int | None]:
    value = _sort_value(run, ordering)
    previous = (
        ordering.reversed()
        .sorted(base)
        .filter(ordering.before(value, run.pk))
        .values_list("id", flat=True)
        .first()
    )
    following = (
        ordering.sorted(base)
        .filter(ordering.after(value, run.pk))
        .values_list("id", flat=True)
        .first()
    )
    return previous, following


def _sort_value(run: Run, ordering: Ordering) -> object:
    """The run's sort key: its field, or the expression as the database computes it."""
    if isinstance(ordering.key, str):
        return getattr(run, ordering.key)
    return ordering.sorted(Run.objects.filter(pk=run.pk)).values_list(SORT_KEY, flat=True).get()


EXPORT_CHUNK = 1000


def decision_export_chunk(*, filters: HistoryFilters, after: Run | None = None) -> list[Run]:
    """The next chunk of matching runs after ``after`` (a run of the previous chunk), in the
    filters' order (keyset, so an export of a million runs never holds more than one chunk)."""
    ordering = filters.ordering
    runs = ordering.sorted(with_media_flag(filters.apply(Run.objects.only(*SUMMARY_FIELDS))))
    if after is not None:
        runs = runs.filter(ordering.after(getattr(after, SORT_KEY), after.pk))
    with planned(filters.q, filters.url, runs.db):
        return list(runs[:EXPORT_CHUNK])
