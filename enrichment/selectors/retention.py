"""What the decision log keeps: the oldest kept run, when the next run falls due for
removal, the last prune pass. Shown by the overview and ``GET /api/health``.

Each figure is an index probe (the oldest run of one outcome is the end of its outcome
index), never a scan: cheap enough for a health check at millions of runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from enrichment.models import RetentionPass, Run
from enrichment.pipeline.retention.policy import RetentionPolicy, expires_at

# A run due for longer than this means no prune pass is running (cron not set up, failing).
OVERDUE_AFTER = timedelta(days=1)


@dataclass(frozen=True)
class RetentionStatus:
    policy: str
    prunes: bool
    oldest_run_at: datetime | None
    oldest_run_id: int | None
    next_due_at: datetime | None  # when the next kept run falls due (past: overdue)
    overdue: bool
    last_pass: RetentionPass | None


def retention_status(
    *, policy: RetentionPolicy | None = None, now: datetime | None = None
) -> RetentionStatus:
    policy = policy if policy is not None else settings.RETENTION
    now = now or timezone.now()
    oldest = Run.objects.order_by("created_at", "id").only("id", "created_at").first()
    due = [
        when
        for outcome in Run.Outcome.values
        if policy.days_for(outcome) is not None
        and (created_at := _oldest_created_at(outcome)) is not None
        and (when := expires_at(policy, outcome=outcome, created_at=created_at)) is not None
    ]
    next_due = min(due, default=None)
    return RetentionStatus(
        policy=policy.describe(),
        prunes=policy.prunes,
        oldest_run_at=oldest.created_at if oldest else None,
        oldest_run_id=oldest.pk if oldest else None,
        next_due_at=next_due,
        overdue=next_due is not None and next_due < now - OVERDUE_AFTER,
        last_pass=RetentionPass.objects.filter(dry_run=False)
        .order_by("-started_at", "-id")
        .first(),
    )


def _oldest_created_at(outcome: str) -> datetime | None:
    return (
        Run.objects.filter(outcome=outcome)
        .order_by("created_at", "id")
        .values_list("created_at", flat=True)
        .first()
    )
