"""Run again: an operator re-sends the message of a run that a worker, Redis or the job
deadline cut short (``interrupted``), that failed (``error``) or that the job queue gave up
on (``dead-letter``), from the admin.

The message goes the way ``POST /api/enrich`` goes (through the workers when one is alive,
else in this process) and makes a new run; the old one stays as it was, for the record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from enrichment.jobs import queue as jobqueue
from enrichment.models import Run
from enrichment.services.runs import EnrichRequest

RERUNNABLE = (Run.Outcome.INTERRUPTED, Run.Outcome.ERROR, Run.Outcome.DEAD_LETTER)
# Runs one action may send again (the admin's request waits for their answers).
MAX_RERUN = 10


@dataclass(frozen=True)
class Rerun:
    run_id: int
    new_run_id: int | None
    error: str | None = None


def rerun_request(run: Run) -> EnrichRequest:
    """The message of ``run`` as it came in (attachments are not stored with a run)."""
    return EnrichRequest(
        body=run.original_body,
        channel=run.channel or None,
        chat_type=run.chat_type or None,
        session_key=run.session_key or None,
        agent_id=run.agent_id or None,
        message_id=run.message_id or None,
    )


async def runs_rerun(runs: Sequence[Run]) -> list[Rerun]:
    """Send each run's message again, at once; one failure does not stop the others."""

    async def one(run: Run) -> Rerun:
        try:
            answer = await jobqueue.enrichment_answer(request=rerun_request(run))
        except Exception as exc:  # reported to the operator, per run
            return Rerun(run.pk, None, str(exc) or type(exc).__name__)
        return Rerun(run.pk, int(answer["runId"]))

    return list(await asyncio.gather(*(one(run) for run in runs)))
