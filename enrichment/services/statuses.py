"""Refill the derived statuses stored on runs (attempts failed, fallback, DNS failure) from
their stored URL decisions and attempts: ``manage.py restate_runs``.

``runs_finish`` stores them with each run; this is for runs written without them — by the
release before migration 0016 while it was filling (README "Deploying a release"), or by
anything that wrote decisions straight into the tables. One UPDATE per batch of ids, each its
own transaction, so the writers go on meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q

from enrichment.models import Attempt, RunQuerySet, UrlDecision
from enrichment.pipeline.links.decisions import SSRF_COMMAND
from enrichment.pipeline.net.ssrf import UNRESOLVED

BATCH = 5000


def _attempts(outcome: str) -> Q:
    rows = Attempt.objects.filter(url_decision__run=OuterRef("pk"), outcome=outcome)
    return Q(Exists(rows.exclude(command=SSRF_COMMAND)))


def runs_restate(
    runs: RunQuerySet,
    *,
    batch_size: int = BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Store the derived statuses of ``runs`` as their decisions say; returns how many runs
    were looked at. ``progress(done, total)`` after each batch."""
    failed, succeeded = _attempts("failed"), _attempts("success")
    unresolved = Q(
        Exists(UrlDecision.objects.filter(run=OuterRef("pk"), blocked=True, reason=UNRESOLVED))
    )
    flags = {
        "attempts_failed": ExpressionWrapper(failed & ~succeeded, output_field=BooleanField()),
        "fallback_used": ExpressionWrapper(failed & succeeded, output_field=BooleanField()),
        "dns_failed": ExpressionWrapper(unresolved, output_field=BooleanField()),
    }
    ids = list(runs.order_by("id").values_list("id", flat=True))
    for start in range(0, len(ids), batch_size):
        chunk = ids[start : start + batch_size]
        runs.model.objects.filter(id__in=chunk).update(**flags)
        if progress is not None:
            progress(min(start + batch_size, len(ids)), len(ids))
    return len(ids)
