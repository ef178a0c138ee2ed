"""Dead letters: worker jobs the job queue gave up on become ``dead-letter`` runs.

A job that keeps failing before its run exists (its retries exhausted), or that failed in a
way not worth retrying, lands in Dramatiq's dead-letter queue. Each one is recorded once as
a run (keyed by its job id, like every worker run) so operators find it in the history
(``outcome=dead-letter``), in the admin (where it can be run again) and under Problems.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from asgiref.sync import async_to_sync
from django.db import transaction

from common.storable import storable_text
from enrichment.models import Run
from enrichment.services.live_feed import decision_broadcast
from enrichment.services.problems import occurrence_from_rows, problems_record
from enrichment.services.runs import EnrichRequest

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeadLetter:
    job: str
    request: EnrichRequest
    error: str
    failed_at: datetime


def dead_letters_record(letters: Sequence[DeadLetter]) -> list[Run]:
    """Record the letters whose job has no run yet; returns the runs it created."""
    jobs = {letter.job for letter in letters}
    if not jobs:
        return []
    with transaction.atomic():
        known = set(Run.objects.filter(job__in=jobs).values_list("job", flat=True))
        runs = Run.objects.bulk_create(
            [
                Run(
                    message_id=letter.request.message_id or "",
                    channel=letter.request.surface
                    or letter.request.provider
                    or letter.request.channel
                    or "",
                    chat_type=letter.request.chat_type or "",
                    session_key=letter.request.session_key or "",
                    agent_id=letter.request.agent_id or "",
                    original_body=storable_text(letter.request.body),
                    outcome=Run.Outcome.DEAD_LETTER,
                    error=letter.error[:2000],
                    created_at=letter.failed_at,
                    finished_at=letter.failed_at,
                    job=letter.job,
                )
                for letter in letters
                if letter.job not in known
            ]
        )
    if runs:
        logger.warning("recorded %d dead-letter job(s) as runs", len(runs))
        try:
            problems_record([occurrence_from_rows(run, ()) for run in runs])
        except Exception as exc:  # the runs are recorded; their problem can wait
            logger.warning("could not group dead letters into problems: %s", exc)
        try:
            for run in runs:
                async_to_sync(decision_broadcast)(run)
        except Exception as exc:  # a channel layer that is down must not lose the record
            logger.warning("could not push dead-letter runs: %s", exc)
    return runs
