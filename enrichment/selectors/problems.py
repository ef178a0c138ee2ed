"""Reads behind /problems/ and /api/problems: the list (by state and kind, last seen first,
paged), one problem with its trend and latest runs, and problem links for the overview.

Everything drawn comes from problem rows (trends included, ``Problem.hourly``); only the
"latest runs" of one problem look at runs, to say which are still stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from django.core.paginator import Page, Paginator
from django.db.models import Count
from django.utils import timezone

from common.errors import InvalidInput, NotFound
from enrichment.models import Problem, ProblemRun, Run
from enrichment.pipeline.problems.fingerprint import KINDS, fingerprint
from enrichment.pipeline.problems.trend import Sparkline, last_days, last_hours, sparkline

PAGE_SIZE = 25
MAX_PAGE_SIZE = 100
LATEST_RUNS = 50
STATE_FILTERS = ("open", "resolved", "ignored", "all")
DEFAULT_STATE = "open"
MAX_ID = 2**63 - 1


@dataclass(frozen=True)
class ProblemFilters:
    state: str = DEFAULT_STATE
    kind: str = ""
    page: int = 1

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> ProblemFilters:
        """Filters from a query string; InvalidInput names the bad parameter."""
        state = params.get("state") or DEFAULT_STATE
        if state not in STATE_FILTERS:
            raise InvalidInput(
                f"state must be one of {', '.join(STATE_FILTERS)}, not {state[:40]!r}"
            )
        kind = params.get("kind") or ""
        if kind and kind not in KINDS:
            raise InvalidInput(f"kind must be one of {', '.join(KINDS)}, not {kind[:40]!r}")
        page_text = params.get("page") or "1"
        if not page_text.isascii() or not page_text.isdigit() or not 1 <= int(page_text) <= 10**6:
            raise InvalidInput(f"page must be a whole number from 1, not {page_text[:40]!r}")
        return cls(state=state, kind=kind, page=int(page_text))

    def query(self, **changes: object) -> str:
        """The query string of these filters with ``changes`` (defaults left out)."""
        values = {"state": self.state, "kind": self.kind, "page": self.page, **changes}
        kept = {
            key: value
            for key, value in values.items()
            if value
            and not (key == "state" and value == DEFAULT_STATE)
            and not (key == "page" and value == 1)
        }
        return urlencode(kept)


@dataclass(frozen=True)
class ProblemRow:
    problem: Problem
    day: Sparkline  # the last 24 hours, per hour
    week: Sparkline  # the last 7 days, per day

    @property
    def kind_label(self) -> str:
        return KINDS.get(self.problem.kind, self.problem.kind)


def problem_row(problem: Problem, *, now: datetime) -> ProblemRow:
    hourly = problem.hourly if isinstance(problem.hourly, dict) else {}
    return ProblemRow(
        problem,
        sparkline(last_hours(hourly, now=now, hours=24)),
        sparkline(last_days(hourly, now=now, days=7), width=56),
    )


@dataclass(frozen=True)
class ProblemList:
    filters: ProblemFilters
    rows: list[ProblemRow]
    page: Page
    state_counts: dict[str, int]


def problem_list(
    *, filters: ProblemFilters, per_page: int = PAGE_SIZE, now: datetime | None = None
) -> ProblemList:
    """One page of problems, last seen first; a page past the end is the last page."""
    now = now or timezone.now()
    problems = Problem.objects.order_by("-last_seen", "-id").defer("detail")
    if filters.state != "all":
        problems = problems.filter(state=filters.state)
    if filters.kind:
        problems = problems.filter(kind=filters.kind)
    page = Paginator(problems, per_page).get_page(filters.page)
    counts = dict(Problem.objects.order_by().values_list("state").annotate(count=Count("id")))
    state_counts = {state: counts.get(state, 0) for state in Problem.State.values}
    state_counts["all"] = sum(state_counts.values())
    return ProblemList(
        filters, [problem_row(item, now=now) for item in page.object_list], page, state_counts
    )


@dataclass(frozen=True)
class LatestRun:
    run_id: int
    seen_at: datetime
    session_key: str
    outcome: str | None  # None: the run is no longer stored (pruned)


@dataclass(frozen=True)
class ProblemDetail:
    row: ProblemRow
    latest_runs: list[LatestRun]
    history_query: str  # /decisions/ filters showing this problem's runs, when there is one


def problem_get(*, problem_id: int) -> Problem:
    if not 1 <= problem_id <= MAX_ID:
        raise NotFound(f"No problem with id {problem_id}.")
    problem = Problem.objects.filter(pk=problem_id).first()
    if problem is None:
        raise NotFound(f"No problem with id {problem_id}.")
    return problem


def problem_detail(*, problem_id: int, now: datetime | None = None) -> ProblemDetail:
    problem = problem_get(problem_id=problem_id)
    rows = list(
        ProblemRun.objects.filter(problem=problem).order_by("-seen_at", "-run_id")[:LATEST_RUNS]
    )
    outcomes = dict(
        Run.objects.filter(pk__in=[row.run_id for row in rows]).values_list("pk", "outcome")
    )
    latest = [
        LatestRun(row.run_id, row.seen_at, row.session_key, outcomes.get(row.run_id))
        for row in rows
    ]
    return ProblemDetail(
        problem_row(problem, now=now or timezone.now()), latest, _history_query(problem)
    )


def _history_query(problem: Problem) -> str:
    """The decision history's own filters for this kind of failure (``command``, ``url``)."""
    if problem.kind == "command-failed":
        return urlencode({"command": problem.subject})
    if problem.kind == "blocked-host" and not problem.subject.startswith("("):
        return urlencode({"url": problem.subject})
    if problem.kind in ("run-error", "run-interrupted", "run-dead-letter"):
        return urlencode({"outcome": problem.kind.removeprefix("run-")})
    return ""


def problem_ids_for(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """Problem ids by (kind, subject), for the overview's top-failing tables: one query, none
    when there is nothing to look up."""
    prints = {fingerprint(kind, subject): (kind, subject) for kind, subject in pairs}
    if not prints:
        return {}
    rows = Problem.objects.filter(fingerprint__in=prints).values_list("fingerprint", "pk")
    return {prints[key]: pk for key, pk in rows}
