"""Dashboard pages: the overview, the decision history (filters, sort, pages), saved views."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST

from common.errors import InvalidInput, NotFound, PermissionDenied
from enrichment import selectors
from enrichment.models import Run
from enrichment.selectors import SORTS, stats
from enrichment.selectors.history_page import history_page, history_rows
from enrichment.selectors.problems import problem_ids_for
from enrichment.selectors.retention import retention_status
from enrichment.selectors.saved_views import saved_view_get, saved_views_for
from enrichment.selectors.status import STATUSES
from enrichment.services import saved_views
from enrichment.services.partitions import partition_status

HISTORY_PAGE_SIZE = 50
# The "Newer" link walks back through the cursors of the pages seen before; the trail is
# capped so a long session of paging cannot grow the URL without bound ("First page" is
# always there).
MAX_TRAIL = 40
TRAIL_SEPARATOR = "."  # never in a cursor (URL-safe base64)
FIRST_PAGE = "~"  # the first page's place in the trail (no cursor); never a cursor either
CHAT_TYPES = ("direct", "group", "channel")
# With a word or URL fragment the page shows its rows first, and its count, facet counts and
# duration chart come after: ``history-counts.js`` fetches them alone from
# ``decision_history_counts`` and swaps them in; without scripts a link opens the same page
# with ``counts=1``, which shows them with the rows.
COUNTS_PARAM = "counts"


@require_GET
def overview(request: HttpRequest) -> HttpResponse:
    data = stats.overview(period_key=request.GET.get("period"))
    storage = partition_status()
    context = {
        "data": data,
        "periods": list(stats.PERIODS.values()),
        "outcomes": stats.CHART_OUTCOMES,
        # Drill-down links keep the period: "Success 27" in the last 24 h opens those 27.
        "since_param": quote(data.since.isoformat(timespec="seconds")) if data.since else "",
        "retention": retention_status(),
        "storage": storage,
        "storage_running_out": storage.running_out(timezone.now()),
    }
    context.update(_top_failing_rows(data))
    return render(request, "enrichment/overview.html", context)


def _top_failing_rows(data: stats.Overview) -> dict[str, list[tuple[stats.Ranked, int | None]]]:
    """Each top-failing entry with the id of its problem (state, trend, sessions), if any."""
    tables = {"failing_rows": ("command-failed", data.failing_commands),
              "blocked_rows": ("blocked-host", data.blocked_hosts)}  # fmt: skip
    ids = problem_ids_for((kind, item.name) for kind, ranked in tables.values() for item in ranked)
    return {
        name: [(item, ids.get((kind, item.name))) for item in ranked]
        for name, (kind, ranked) in tables.items()
    }


@dataclass(frozen=True)
class HistoryNavigation:
    is_first_page: bool
    older_query: str | None
    newer_query: str | None
    first_query: str


def _history_navigation(
    filter_params: dict[str, str], cursor: str, trail: list[str], next_cursor: str | None
) -> HistoryNavigation:
    def query(cursor: str, trail: list[str]) -> str:
        params = dict(filter_params)
        if cursor and cursor != FIRST_PAGE:
            params["cursor"] = cursor
        if trail:
            params["trail"] = TRAIL_SEPARATOR.join(trail)
        return urlencode(params)

    older = None
    if next_cursor:
        older = query(next_cursor, [*trail, cursor or FIRST_PAGE][-MAX_TRAIL:])
    newer = None
    if cursor:
        # Without a trail (a shared or hand-made link) "Newer" goes to the first page.
        newer = query(trail[-1], trail[:-1]) if trail else query(FIRST_PAGE, [])
    return HistoryNavigation(
        is_first_page=not cursor,
        older_query=older,
        newer_query=newer,
        first_query=urlencode(filter_params),
    )


def _page_size(raw: str | None) -> int:
    if not raw:
        return HISTORY_PAGE_SIZE
    try:
        return int(raw)
    except ValueError:
        raise InvalidInput(f"limit: not a whole number: {raw!r}") from None


@dataclass(frozen=True)
class SortColumn:
    """A sortable column header: the link it is, and what it says to assistive technology."""

    label: str
    query: str  # the history with the same filters, sorted by this column
    aria_sort: str  # "ascending", "descending" or "none"
    arrow: str  # shown beside the label: ▼ ▲ or nothing


# Column → (its key in ``sort``, whether the first click sorts descending).
SORT_COLUMNS = {"time": ("Time", True), "urls": ("URLs", True), "duration": ("Duration", True)}
SORT_LABELS = {
    "-time": "newest first",
    "time": "oldest first",
    "-duration": "longest first",
    "duration": "shortest first",
    "-urls": "most URLs first",
    "urls": "fewest URLs first",
}


def _sort_columns(filter_params: dict[str, str], current: str) -> dict[str, SortColumn]:
    """Each sortable column's header link: a click on the sorted column reverses it, a click
    on another sorts by it (largest/newest first)."""
    columns = {}
    for key, (label, descending_first) in SORT_COLUMNS.items():
        if current.lstrip("-") == key:
            descending = current.startswith("-")
            target = key if descending else f"-{key}"
            aria, arrow = ("descending", "▼") if descending else ("ascending", "▲")
        else:
            target = f"-{key}" if descending_first else key
            aria, arrow = "none", ""
        params = {name: value for name, value in filter_params.items() if name != "sort"}
        if target != selectors.DEFAULT_SORT:
            params["sort"] = target
        columns[key] = SortColumn(label, urlencode(params), aria, arrow)
    return columns


def _history_context(
    request: HttpRequest, params: dict[str, str], *, counts_part: bool = False
) -> tuple[dict[str, Any], int]:
    """Everything the history page shows for ``params``, and its status (400 when a filter
    cannot be applied: the page then names the problem and marks the field). For
    ``counts_part`` (``decision_history_counts``) its count, facets and durations: the rows
    are not read again when the count does not need them."""
    cursor = params.get("cursor", "")
    trail = params["trail"].split(TRAIL_SEPARATOR) if params.get("trail") else []
    context: dict[str, Any] = {
        "form": params,
        "outcomes": Run.Outcome.values,
        "outcome_choices": [{"value": value, "count": None} for value in Run.Outcome.values],
        "chat_type_choices": [{"value": value, "count": None} for value in CHAT_TYPES],
        "status_choices": [{"value": value, "count": None} for value in STATUSES],
        "statuses": STATUSES,
        "chat_types": CHAT_TYPES,
        "sort_choices": [(key, SORT_LABELS[key]) for key in SORTS],
        "saved_views": [] if counts_part else saved_views_for(user=request.user),
        "view_name_max": saved_views.MAX_NAME,
    }
    try:
        filters = selectors.HistoryFilters.from_params(params)
        limit = _page_size(params.get("limit"))
        counts_asked = counts_part or params.get(COUNTS_PARAM) == "1"
        if (filters.q or filters.url) and not counts_asked:  # the rows first, counts later
            found = history_rows(filters=filters, cursor=cursor or None, limit=limit)
        else:
            found = history_page(
                filters=filters, cursor=cursor or None, limit=limit, rows=not counts_part
            )
    except InvalidInput as exc:
        context["error"] = exc.detail
        context["error_field"] = exc.detail.split(":", 1)[0]
        if context["error_field"] == "sort":
            context["sort_choices_text"] = ", ".join(SORTS)
        return context, 400
    filter_params = filters.as_params()
    if limit != HISTORY_PAGE_SIZE:
        filter_params["limit"] = str(limit)
    filter_query = urlencode(filters.as_params())
    context.update(
        filters=filters,
        page=found.page,
        result_count=found.count,
        facets=found.facets,
        facet_window=f"{found.facet_window:,}",
        facets_windowed=found.facets_windowed,
        counts_skipped=found.counts_skipped,
        newest_run_id=found.newest_run_id,
        has_filters=bool(filters.as_params()),
        filter_query=filter_query,
        sort_columns=_sort_columns(filter_params, filters.sort),
        sort_label=SORT_LABELS[filters.sort],
        time_order=filters.sort == selectors.DEFAULT_SORT,
        navigation=_history_navigation(filter_params, cursor, trail, found.page.next_cursor),
        since_value=_datetime_local(filters.since),
        until_value=_datetime_local(filters.until),
        chips=filter_chips(filter_params),
        presets=time_presets(filter_params),
        custom_range=bool((filters.since or filters.until) and not filters.range),
        hidden_filters=[(name, filter_params[name]) for name in HIDDEN if name in filter_params],
        durations=found.durations,
        durations_skipped=found.durations_skipped,
        counts_pending=found.counts_deferred,
        counts_query=urlencode({**params, COUNTS_PARAM: "1"}),
        counts_part_url=f"{reverse('decision-counts')}?{urlencode(params)}",
    )
    return context, 200


# Filters with no field of their own on the form: kept through a change of the others.
HIDDEN = ("command", "range", "limit")
CHIP_LABELS = {
    "outcome": "Outcome",
    "status": "Status",
    "channel": "Channel",
    "chatType": "Chat type",
    "url": "URL contains",
    "q": "Text",
    "since": "Since",
    "until": "Until",
    "command": "Failed CLI entry",
}
SESSION_MATCH_LABELS = {"prefix": "starts with", "contains": "contains", "exact": "is"}
PRESET_LABELS = {"1h": "1 h", "24h": "24 h", "7d": "7 d", "30d": "30 d"}


@dataclass(frozen=True)
class Chip:
    label: str
    query: str  # the history without this one value, every other filter kept


def filter_chips(params: dict[str, str]) -> list[Chip]:
    """One removable chip per active filter value, hidden ones (``command``) included."""
    chips = []
    for name, value in params.items():
        if name in selectors.MULTI_VALUED:
            for one in selectors.split_values(value):
                rest = [v for v in selectors.split_values(value) if v != one]
                label = STATUSES.get(one, one) if name == "status" else one
                chips.append(
                    Chip(f"{CHIP_LABELS[name]}: {label}", _without(params, name, ",".join(rest)))
                )
        elif name == "sessionKey":
            match = SESSION_MATCH_LABELS[params.get("sessionMatch", "prefix")]
            query = _without(params, "sessionMatch", "")
            chips.append(Chip(f"Session key {match}: {value}", _without(query, name, "")))
        elif name == "range":
            chips.append(Chip(f"Last {PRESET_LABELS[value]}", _without(params, name, "")))
        elif name in ("since", "until"):
            shown = f"{value[:16].replace('T', ' ')} UTC"
            chips.append(Chip(f"{CHIP_LABELS[name]}: {shown}", _without(params, name, "")))
        elif name in CHIP_LABELS:
            chips.append(Chip(f"{CHIP_LABELS[name]}: {value}", _without(params, name, "")))
    return chips


def _without(params: dict[str, str] | str, name: str, value: str) -> str:
    kept = dict(params) if isinstance(params, dict) else dict(QueryDict(params).items())
    if value:
        kept[name] = value  # in its place: the query reads as before, minus one value
    else:
        kept.pop(name, None)
    return urlencode(kept)


@dataclass(frozen=True)
class Preset:
    label: str
    query: str
    active: bool


def time_presets(params: dict[str, str]) -> list[Preset]:
    """The time presets, each keeping every other filter (and dropping a custom range)."""
    base = {k: v for k, v in params.items() if k not in ("since", "until", "range")}
    return [
        Preset(label, urlencode({**base, "range": key}), params.get("range") == key)
        for key, label in PRESET_LABELS.items()
    ]


@require_GET
def decision_history(request: HttpRequest) -> HttpResponse:
    context, status = _history_context(request, selectors.query_params(request.GET))
    return render(request, "enrichment/history.html", context, status=status)


@require_GET
def decision_history_counts(request: HttpRequest) -> HttpResponse:
    """The history page's count, facet counts and duration chart alone, for the same query
    (``history-counts.js`` swaps them into a page that showed its rows first): the page's
    own fragments, rendered and escaped as on a reload. Bad filters: 400 naming them."""
    context, status = _history_context(
        request, selectors.query_params(request.GET), counts_part=True
    )
    if status != 200:
        return HttpResponse(format_html('<p role="alert">{}</p>', context["error"]), status=status)
    return render(request, "enrichment/history_counts.html", context)


def _history_url(query: str) -> str:
    return reverse("decisions") + (f"?{query}" if query else "")


@require_POST
def saved_view_create(request: HttpRequest) -> HttpResponse:
    """Save the filters and order of the page the form was on under a name (POST, CSRF)."""
    query = request.POST.get("query", "")
    name = request.POST.get("name", "")
    try:
        view = saved_views.saved_view_create(
            owner=request.user,
            name=name,
            query=query,
            shared=request_flag(request.POST.get("shared", "")),
        )
    except InvalidInput as exc:
        # The page the form was on, with the form's problem beside its field.
        try:
            params = selectors.query_params(QueryDict(saved_views.saved_view_query(query)))
        except InvalidInput:
            params = {}
        context, _ = _history_context(request, params)
        context.update(
            view_error=exc.detail,
            view_error_field=exc.detail.split(":", 1)[0],
            view_form={
                "name": name[: saved_views.MAX_NAME * 2],
                "shared": request.POST.get("shared"),
            },
        )
        return render(request, "enrichment/history.html", context, status=400)
    messages.success(request, f"Saved the view “{view.name}”.")
    return HttpResponseRedirect(_history_url(view.query), status=303)


@require_POST
def saved_view_delete(request: HttpRequest, view_id: int) -> HttpResponse:
    try:
        view = saved_views.saved_view_delete(user=request.user, view_id=view_id)
    except NotFound:
        raise Http404(f"No saved view with id {view_id}.") from None
    except PermissionDenied as exc:
        return render(
            request, "403.html", {"exception": exc.detail, "hide_staff_hint": True}, status=403
        )
    messages.success(request, f"Deleted the view “{view.name}”.")
    return HttpResponseRedirect(reverse("decisions"), status=303)


@require_GET
def saved_view_open(request: HttpRequest, view_id: int) -> HttpResponse:
    """A saved view's stable address: the history with its filters and order."""
    try:
        view = saved_view_get(user=request.user, view_id=view_id)
    except NotFound:
        raise Http404(f"No saved view with id {view_id}.") from None
    return HttpResponseRedirect(_history_url(view.query))


def _datetime_local(value: Any) -> str:
    return value.strftime("%Y-%m-%dT%H:%M") if value else ""


def request_flag(raw: str) -> bool:
    return raw.lower() in ("on", "1", "true", "yes")
