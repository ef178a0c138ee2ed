"""For tests that write a run's URL decisions and attempts themselves (not through the
pipeline): store the run's derived statuses from those rows (``services.statuses``)."""

from __future__ import annotations

from enrichment.models import Run
from enrichment.services.statuses import runs_restate


def restate(*runs: Run) -> None:
    runs_restate(Run.objects.filter(pk__in=[run.pk for run in runs]))
    for run in runs:
        run.refresh_from_db(fields=["attempts_failed", "fallback_used", "dns_failed"])
