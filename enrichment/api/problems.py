"""Problems: failures grouped by fingerprint, with their state (open, resolved, ignored)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.http import HttpRequest
from ninja import Router, Schema
from pydantic import ConfigDict, Field

from enrichment.models import Problem
from enrichment.selectors.problems import (
    MAX_ID,
    MAX_PAGE_SIZE,
    PAGE_SIZE,
    ProblemFilters,
    ProblemRow,
    problem_detail,
    problem_list,
)
from enrichment.services.problems import problem_set_state

router = Router(tags=["problems"])


class ProblemOut(Schema):
    id: int
    fingerprint: str
    kind: str
    subject: str
    title: str
    state: str
    count: int
    sessionCount: int
    firstSeen: datetime
    lastSeen: datetime
    trend24h: list[int]  # runs per hour, oldest first
    trend7d: list[int]  # runs per day, oldest first


class ProblemPage(Schema):
    items: list[ProblemOut]
    count: int
    page: int
    pages: int


class ProblemRunOut(Schema):
    runId: int
    seenAt: datetime
    sessionKey: str
    stored: bool  # False once retention pruned the run


class ProblemDetailOut(ProblemOut):
    detail: str
    recentSessions: list[str]
    latestRuns: list[ProblemRunOut]


class StateIn(Schema):
    model_config = ConfigDict(extra="forbid")
    state: Literal["open", "resolved", "ignored"]


def _problem_json(row: ProblemRow) -> dict[str, Any]:
    problem: Problem = row.problem
    return {
        "id": problem.pk,
        "fingerprint": problem.fingerprint,
        "kind": problem.kind,
        "subject": problem.subject,
        "title": problem.title,
        "state": problem.state,
        "count": problem.count,
        "sessionCount": problem.session_count,
        "firstSeen": problem.first_seen,
        "lastSeen": problem.last_seen,
        "trend24h": [bar.count for bar in row.day.bars],
        "trend7d": [bar.count for bar in row.week.bars],
    }


ProblemId = Annotated[int, Field(ge=1, le=MAX_ID)]


@router.get("/problems", response=ProblemPage)
def problems(
    request: HttpRequest,
    state: Literal["open", "resolved", "ignored", "all"] = "open",
    kind: str = "",
    page: Annotated[int, Field(ge=1, le=10**6)] = 1,
    limit: Annotated[int, Field(ge=1, le=MAX_PAGE_SIZE)] = PAGE_SIZE,
) -> dict[str, Any]:
    """Problems, last seen first. ``state`` (default ``open``; ``all``), ``kind`` (e.g.
    ``blocked-host``, ``command-failed``, ``run-error``), ``page`` and ``limit``."""
    filters = ProblemFilters.from_params({"state": state, "kind": kind, "page": str(page)})
    listing = problem_list(filters=filters, per_page=limit)
    return {
        "items": [_problem_json(row) for row in listing.rows],
        "count": listing.page.paginator.count,
        "page": listing.page.number,
        "pages": listing.page.paginator.num_pages,
    }


@router.get("/problems/{problem_id}", response=ProblemDetailOut)
def problem(request: HttpRequest, problem_id: ProblemId) -> dict[str, Any]:
    """One problem with its latest runs (``stored: false`` once a run was pruned)."""
    detail = problem_detail(problem_id=problem_id)
    problem = detail.row.problem
    return _problem_json(detail.row) | {
        "detail": problem.detail,
        "recentSessions": list(problem.recent_sessions or []),
        "latestRuns": [
            {
                "runId": run.run_id,
                "seenAt": run.seen_at,
                "sessionKey": run.session_key,
                "stored": run.outcome is not None,
            }
            for run in detail.latest_runs
        ],
    }


@router.patch("/problems/{problem_id}", response=ProblemDetailOut)
def problem_state(request: HttpRequest, problem_id: ProblemId, payload: StateIn) -> dict[str, Any]:
    """Set the state: ``resolved`` (reopens when it happens again), ``ignored`` (stays
    ignored) or ``open``."""
    problem_set_state(problem_id=problem_id, state=payload.state)
    return problem(request, problem_id)
