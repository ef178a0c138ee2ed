"""A run's JSON record for the API: the summary, the bodies and every stage's record."""

from __future__ import annotations

from typing import Any

from enrichment.models import Run
from enrichment.pipeline.retention.policy import REDACTED_CONTENT
from enrichment.selectors.summary import run_summary
from enrichment.stage_specs import stage_records_load


def decision_record(run: Run) -> dict[str, Any]:
    return {
        **run_summary(run),
        "messageId": run.message_id,
        "finishedAt": run.finished_at.isoformat() if run.finished_at else None,
        "originalBody": run.original_body,
        "enrichedBody": run.enriched_body,
        "error": run.error,
        "redacted": list(REDACTED_CONTENT) if run.redacted_at else [],
        **stage_records_load(run),
        "configSnapshot": run.config_snapshot,
    }
