"""Problems: failures of recorded runs grouped by fingerprint (``pipeline.problems``).

``problems_record`` is the one writer. Runs are recorded into it right after they are
stored (``services.runs``), and ``manage.py rebuild_problems`` replays stored runs through
it. Recording is idempotent per (problem, run): a run seen twice counts once.

State rules: a new problem is ``open``; a ``resolved`` problem that happens again (a run
newer than its resolution) is ``open`` again; an ``ignored`` problem stays ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from common.errors import InvalidInput, NotFound
from enrichment.models import Attempt, Problem, ProblemRun, ProblemSession, Run, UrlDecision
from enrichment.pipeline.problems.fingerprint import (
    AttemptFacts,
    Failure,
    RunFacts,
    UrlFacts,
    run_failures,
)
from enrichment.pipeline.problems.trend import hourly_add

RECENT_SESSIONS = 5


@dataclass(frozen=True)
class Occurrence:
    """The failures of one recorded run."""

    run_id: int
    at: datetime
    session_key: str
    failures: tuple[Failure, ...]


def occurrence_from_rows(run: Run, rows: Iterable[object]) -> Occurrence:
    """A run just stored, with the URL decision and attempt rows written for it."""
    decisions = [row for row in rows if isinstance(row, UrlDecision)]
    attempts: dict[int, list[Attempt]] = {}
    for row in rows:
        if isinstance(row, Attempt):
            attempts.setdefault(id(row.url_decision), []).append(row)
    return _occurrence(run, [(decision, attempts.get(id(decision), [])) for decision in decisions])


def occurrence_from_stored(run: Run) -> Occurrence:
    """A stored run, its ``url_decisions__attempts`` prefetched."""
    pairs = [(decision, list(decision.attempts.all())) for decision in run.url_decisions.all()]
    return _occurrence(run, pairs)


def _occurrence(run: Run, pairs: Sequence[tuple[UrlDecision, Sequence[Attempt]]]) -> Occurrence:
    facts = RunFacts(
        outcome=run.outcome,
        error=run.error,
        urls=tuple(
            UrlFacts(
                url=decision.url,
                blocked=decision.blocked,
                reason=decision.reason,
                attempts=tuple(
                    AttemptFacts(attempt.command, attempt.outcome, attempt.reason)
                    for attempt in attempts
                ),
            )
            for decision, attempts in pairs
        ),
        media=tuple(run.media) if isinstance(run.media, list) else (),
    )
    return Occurrence(run.pk, run.created_at, run.session_key, tuple(run_failures(facts)))


def problems_record(occurrences: Sequence[Occurrence], *, now: datetime | None = None) -> int:
    """Count these runs' failures into their problems (created when new); the number of
    (problem, run) pairs counted. Runs without a failure cost no query."""
    occurrences = [item for item in occurrences if item.failures]
    if not occurrences:
        return 0
    now = now or timezone.now()
    examples = {f.fingerprint: f for item in occurrences for f in item.failures}
    with transaction.atomic():
        problems = _problems_locked(examples, occurrences)
        counted = set(
            ProblemRun.objects.filter(
                problem__in=problems.values(), run_id__in={item.run_id for item in occurrences}
            ).values_list("problem_id", "run_id")
        )
        new_runs, new_sessions = [], []
        for item in sorted(occurrences, key=lambda item: (item.at, item.run_id)):
            for failure in item.failures:
                problem = problems[failure.fingerprint]
                if (problem.pk, item.run_id) in counted:
                    continue
                counted.add((problem.pk, item.run_id))
                _count_into(problem, failure, item, now)
                new_runs.append(ProblemRun(problem=problem, run_id=item.run_id, seen_at=item.at,
                                           session_key=item.session_key))  # fmt: skip
                if item.session_key:
                    new_sessions.append(
                        ProblemSession(problem=problem, session_key=item.session_key)
                    )
        if not new_runs:
            return 0
        ProblemRun.objects.bulk_create(new_runs)
        ProblemSession.objects.bulk_create(new_sessions, ignore_conflicts=True)
        touched = {row.problem_id: row.problem for row in new_runs}
        sessions = dict(
            ProblemSession.objects.filter(problem_id__in=touched)
            .order_by()
            .values("problem_id")
            .annotate(count=Count("id"))
            .values_list("problem_id", "count")
        )
        for problem_id, problem in touched.items():
            problem.session_count = sessions.get(problem_id, 0)
        Problem.objects.bulk_update(list(touched.values()), UPDATED_FIELDS)
    return len(new_runs)


UPDATED_FIELDS = [
    "count", "first_seen", "last_seen", "hourly", "detail", "last_run_id", "recent_sessions",
    "session_count", "state", "state_changed_at",
]  # fmt: skip


def _problems_locked(
    examples: dict[str, Failure], occurrences: Sequence[Occurrence]
) -> dict[str, Problem]:
    """The problems of these fingerprints, locked for this transaction; missing ones are
    created first (``ignore_conflicts``: another process may create the same one now)."""
    first_at = min(item.at for item in occurrences)
    existing = set(
        Problem.objects.filter(fingerprint__in=examples).values_list("fingerprint", flat=True)
    )
    missing = [
        Problem(
            fingerprint=key,
            kind=f.kind,
            subject=f.subject,
            title=f.title[:400],
            first_seen=first_at,
            last_seen=first_at,
        )  # fmt: skip
        for key, f in examples.items()
        if key not in existing
    ]
    if missing:
        Problem.objects.bulk_create(missing, ignore_conflicts=True)
    # Locked in one order everywhere, so two processes recording overlapping problems wait
    # for each other instead of deadlocking.
    locked = (
        Problem.objects.select_for_update().filter(fingerprint__in=examples).order_by("fingerprint")
    )
    return {problem.fingerprint: problem for problem in locked}


def _count_into(problem: Problem, failure: Failure, item: Occurrence, now: datetime) -> None:
    if problem.count == 0 or item.at < problem.first_seen:
        problem.first_seen = item.at
    if problem.count == 0 or item.at >= problem.last_seen:
        problem.last_seen = item.at
        problem.last_run_id = item.run_id
        problem.detail = failure.detail
        if item.session_key:
            sessions = [key for key in problem.recent_sessions if key != item.session_key]
            problem.recent_sessions = [item.session_key, *sessions][:RECENT_SESSIONS]
    problem.count += 1
    problem.hourly = hourly_add(problem.hourly or {}, at=item.at, now=now)
    if problem.state == Problem.State.RESOLVED and (
        problem.state_changed_at is None or item.at > problem.state_changed_at
    ):
        problem.state = Problem.State.OPEN  # it happened again after it was resolved
        problem.state_changed_at = item.at


STATES = tuple(Problem.State.values)


def problem_set_state(*, problem_id: int, state: str) -> Problem:
    """Mark a problem open, resolved or ignored (InvalidInput names a bad state)."""
    if state not in STATES:
        raise InvalidInput(f"state must be one of {', '.join(STATES)}, not {state[:40]!r}")
    with transaction.atomic():
        problem = Problem.objects.select_for_update().filter(pk=problem_id).first()
        if problem is None:
            raise NotFound(f"No problem with id {problem_id}.")
        if problem.state != state:
            problem.state = state
            problem.state_changed_at = timezone.now()
            problem.save(update_fields=["state", "state_changed_at"])
    return problem


def problems_reset() -> None:
    """Forget every count (states kept) before a rebuild replays the stored runs."""
    with transaction.atomic():
        ProblemRun.objects.all().delete()
        ProblemSession.objects.all().delete()
        Problem.objects.update(count=0, hourly={}, session_count=0, recent_sessions=[],
                               last_run_id=None)  # fmt: skip


def problems_prune_empty() -> int:
    """Problems no stored run shows any more (after a rebuild) go, unless ignored: an
    ignored problem must stay ignored when it comes back."""
    deleted, _ = Problem.objects.filter(count=0).exclude(state=Problem.State.IGNORED).delete()
    return deleted


REBUILD_BATCH = 500


def problems_rebuild(*, progress: Callable[[int, int], None] | None = None) -> int:
    """Recount every problem from the runs still stored (states kept; problems no stored run
    shows any more are dropped unless ignored). Only runs that can hold a failure are read,
    in batches, oldest first. The number of (problem, run) pairs counted."""
    problems_reset()
    candidates = Run.objects.filter(
        Q(outcome__in=[Run.Outcome.ERROR, Run.Outcome.INTERRUPTED])
        | Q(pk__in=UrlDecision.objects.filter(blocked=True).values("run_id"))
        | Q(pk__in=Attempt.objects.filter(outcome="failed").values("url_decision__run_id"))
        | ~Q(media=[])
    )
    total = candidates.count()
    done = counted = 0
    last_pk = 0
    while True:
        batch = list(
            candidates.filter(pk__gt=last_pk)
            .order_by("pk")
            .only("pk", "created_at", "session_key", "outcome", "error", "media")
            .prefetch_related("url_decisions__attempts")[:REBUILD_BATCH]
        )
        if not batch:
            break
        counted += problems_record([occurrence_from_stored(run) for run in batch])
        last_pk = batch[-1].pk
        done += len(batch)
        if progress is not None:
            progress(done, total)
    problems_prune_empty()
    return counted
