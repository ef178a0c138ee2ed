"""A run as one line of the decision log: the ``GET /api/decisions`` item, which the live
feed pushes and the exports write too."""

from __future__ import annotations

from typing import Any

from enrichment.models import Run


def run_summary(run: Run) -> dict[str, Any]:
    return {
        "runId": run.pk,
        "createdAt": run.created_at.isoformat(),
        "channel": run.channel,
        "chatType": run.chat_type,
        "sessionKey": run.session_key,
        "agentId": run.agent_id,
        "outcome": run.outcome,
        "urlCount": run.url_count,
        "durationMs": run.duration_ms,
        # When its content was redacted (README "Retention"); None: never.
        "redactedAt": run.redacted_at.isoformat() if run.redacted_at else None,
    }
