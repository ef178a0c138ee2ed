"""For tests that write a run's URL decisions and attempts themselves (not through the
pipeline): store the run's derived statuses from those rows, as ``runs_finish`` does."""

from __future__ import annotations

from enrichment.models import Attempt, Run, UrlDecision
from enrichment.pipeline.links.derived import derived_status


def restate(*runs: Run) -> None:
    for run in runs:
        status = derived_status(
            Attempt.objects.filter(url_decision__run=run).values_list("command", "outcome"),
            UrlDecision.objects.filter(run=run, blocked=True).values_list("reason", flat=True),
        )
        run.attempts_failed = status.attempts_failed
        run.fallback_used = status.fallback_used
        run.dns_failed = status.dns_failed
        run.save(update_fields=["attempts_failed", "fallback_used", "dns_failed"])
