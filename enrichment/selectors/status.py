"""Derived run status: what the stored outcome alone does not tell, without changing it.

The stored ``outcome`` describes link understanding (``success | skipped | …``), so a run
whose image was described reads ``no-links``, and a run where every CLI attempt failed reads
``skipped`` like a harmless skip. Two derived flags tell them apart at a glance and as
filters (``?status=media``, ``?status=attempts-failed``):

- ``media``: attachments went through media understanding (the run has media records);
- ``attempts-failed``: at least one CLI attempt failed and no URL got a result, i.e. the
  configured tools were tried and none worked — a failure, not a skip;
- ``fallback``: an attempt failed but a later entry of the chain succeeded (the run reads
  ``success``, yet its first choice is broken);
- ``dns-failure``: a URL's host did not resolve (not a policy refusal: never "blocked").
"""

from __future__ import annotations

from typing import Any

from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q

from enrichment.models import Attempt, Run, RunQuerySet, UrlDecision
from enrichment.pipeline.net.ssrf import UNRESOLVED

STATUSES = {
    "media": "media",
    "attempts-failed": "attempts failed",
    "fallback": "fallback succeeded",
    "dns-failure": "DNS failure",
}


def _attempts(outcome: str) -> Exists:
    return Exists(
        Attempt.objects.filter(url_decision__run=OuterRef("pk"), outcome=outcome).exclude(
            command="ssrf"
        )
    )


def status_condition(status: str) -> Q:
    if status == "media":
        return ~Q(media=[])
    if status == "attempts-failed":
        return Q(_attempts("failed")) & ~Q(_attempts("success"))
    if status == "fallback":
        return Q(_attempts("failed")) & Q(_attempts("success"))
    if status == "dns-failure":
        unresolved = UrlDecision.objects.filter(run=OuterRef("pk"), blocked=True, reason=UNRESOLVED)
        return Q(Exists(unresolved))
    raise ValueError(status)


def with_derived_status(runs: RunQuerySet) -> RunQuerySet:
    """Annotate ``has_media`` and ``attempts_failed`` (two subqueries per page, not per row).

    Only for a query that returns few rows of its own (``derived_status_rows``): in the
    select list of a LIMITed scan over the whole history, PostgreSQL plans the EXISTS as a
    hash over every attempt (it sizes the choice for all rows, not the LIMIT) — a full
    table scan on every page."""
    return runs.annotate(
        has_media=ExpressionWrapper(status_condition("media"), output_field=BooleanField()),
        attempts_failed=ExpressionWrapper(
            status_condition("attempts-failed"), output_field=BooleanField()
        ),
        fallback_used=ExpressionWrapper(status_condition("fallback"), output_field=BooleanField()),
        dns_failed=ExpressionWrapper(status_condition("dns-failure"), output_field=BooleanField()),
    )


def derived_status_rows(runs: list[Run]) -> list[Run]:
    """The two flags for a page of runs already read, in one query over their ids (an index
    lookup per run, whatever the size of the history)."""
    if not runs:
        return runs
    annotated: Any = with_derived_status(Run.objects.filter(pk__in=[run.pk for run in runs]))
    flags = {
        row[0]: row[1:]
        for row in annotated.values_list(
            "pk", "has_media", "attempts_failed", "fallback_used", "dns_failed"
        )
    }
    for run in runs:
        (
            run.has_media,  # type: ignore[attr-defined]
            run.attempts_failed,  # type: ignore[attr-defined]
            run.fallback_used,  # type: ignore[attr-defined]
            run.dns_failed,  # type: ignore[attr-defined]
        ) = flags.get(run.pk, (False, False, False, False))
    return runs


def derived_status_set(run: Run) -> Run:
    """The same two flags for one run whose URL decisions and attempts are prefetched
    (the run page), computed in Python: no extra query."""
    attempts = [
        attempt
        for row in run.url_decisions.all()
        for attempt in row.attempts.all()
        if attempt.command != "ssrf"
    ]
    failed = any(a.outcome == "failed" for a in attempts)
    succeeded = any(a.outcome == "success" for a in attempts)
    run.has_media = bool(run.media)  # type: ignore[attr-defined]
    run.attempts_failed = failed and not succeeded  # type: ignore[attr-defined]
    run.fallback_used = failed and succeeded  # type: ignore[attr-defined]
    run.dns_failed = any(  # type: ignore[attr-defined]
        row.blocked and row.reason == UNRESOLVED for row in run.url_decisions.all()
    )
    return run


def run_statuses(run: Run) -> list[str]:
    """The derived statuses of a run whose flags are set (``derived_status_rows``)."""
    flags = {
        "media": "has_media",
        "attempts-failed": "attempts_failed",
        "fallback": "fallback_used",
        "dns-failure": "dns_failed",
    }
    return [status for status, flag in flags.items() if getattr(run, flag, False)]
