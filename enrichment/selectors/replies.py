"""The assistant replies stored for a run's turn: what the run page links to."""

from __future__ import annotations

from typing import Any

from django.db.models import Count

from enrichment.models import Run
from richoutput.models import AssistantMessage
from richoutput.selectors import readable_by

MAX_REPLIES = 20


def run_replies(*, run: Run, reader: Any, limit: int = MAX_REPLIES) -> list[AssistantMessage]:
    """Stored assistant messages of the run's session created from the run on, up to the
    session's next run (the gateway stores a turn's reply after enriching it; a later reply
    answers a later turn), oldest first, each with ``block_count``. Two queries.

    A run without a session key has no replies: nothing ties a message to it. Only the
    replies ``reader`` may read are listed (their own; staff: all)."""
    if not run.session_key:
        return []
    next_run = (
        Run.objects.filter(session_key=run.session_key, created_at__gt=run.created_at)
        .order_by("created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    messages = readable_by(
        AssistantMessage.objects.filter(
            session_key=run.session_key, created_at__gte=run.created_at
        ),
        reader,
    )
    if next_run is not None:
        messages = messages.filter(created_at__lt=next_run)
    return list(
        messages.annotate(block_count=Count("blocks"))
        .only("id", "created_at", "text")
        .order_by("created_at", "id")[:limit]
    )
