"""Decision-log rows back into the core's decision values, and the API's JSON record."""

from __future__ import annotations

from typing import Any

from enrichment.models import Run
from enrichment.pipeline.links.decisions import Attempt, LinkDecision, UrlDecision
from enrichment.services import run_summary

# Outcomes that only the service knows (the core's LinkDecision never has them).
SERVICE_OUTCOMES = {"running", "error", "interrupted"}


def link_decision(run: Run) -> LinkDecision:
    """The stored decision of a run fetched with ``selectors.decision_get`` (no extra queries)."""
    urls = []
    for row in run.url_decisions.all():
        attempts = tuple(
            Attempt(
                type=item.type,
                command=item.command,
                argv=tuple(item.argv),
                outcome=item.outcome,
                reason=item.reason or None,
                exit_code=item.exit_code,
                duration_ms=item.duration_ms or 0,
                stdout_bytes=item.stdout_bytes or 0,
                stderr_tail=item.stderr_tail,
            )
            for item in row.attempts.all()
        )
        chosen = attempts[row.chosen_position] if row.chosen_position is not None else None
        urls.append(
            UrlDecision(
                row.url, row.blocked, row.reason or None, tuple(row.addresses), attempts, chosen
            )
        )
    outcome = "skipped" if run.outcome in SERVICE_OUTCOMES else run.outcome
    return LinkDecision(outcome, run.matched_rule, tuple(urls))  # type: ignore[arg-type]


def decision_record(run: Run) -> dict[str, Any]:
    links = link_decision(run).to_dict()
    links["outcome"] = run.outcome  # "running"/"error"/"interrupted" are shown as they are
    return {
        **run_summary(run),
        "messageId": run.message_id,
        "finishedAt": run.finished_at.isoformat() if run.finished_at else None,
        "originalBody": run.original_body,
        "enrichedBody": run.enriched_body,
        "error": run.error,
        "links": links,
        "media": list(run.media),
        "configSnapshot": run.config_snapshot,
    }
