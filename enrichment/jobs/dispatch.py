"""Where a message is enriched: in this process, or by a worker over the channel layer.

With Redis, ``/ws/enrich/`` hands its jobs to ``manage.py runworker enrichment`` processes
(``enrichment.jobs``); without it, everything runs in the serving process.
"""

from __future__ import annotations

import uuid

from channels.layers import get_channel_layer
from django.conf import settings
from django.core.cache import cache

from enrichment.services.runs import EnrichRequest

WORKER_CHANNEL = "enrichment"
# How long a claimed worker job id is remembered (longer than any run can take).
JOB_CLAIM_SECONDS = 3600


def workers_enabled() -> bool:
    """With Redis, jobs go to ``manage.py runworker enrichment`` processes."""
    return bool(settings.REDIS_URL) and getattr(settings, "ENRICHMENT_USE_WORKERS", True)


async def enrichment_dispatch(
    *, request: EnrichRequest, request_id: str, reply_channel: str
) -> None:
    """Hand a job to the worker pool; its frames come back to ``reply_channel``."""
    layer = get_channel_layer()
    await layer.send(
        WORKER_CHANNEL,
        {
            "type": "enrich.job",
            "job": uuid.uuid4().hex,
            "request": request.to_json(),
            "id": request_id,
            "reply_channel": reply_channel,
        },
    )


async def job_claim(job: str) -> bool:
    """True for the first worker to claim ``job``, False for every later one.

    channels_redis may hand one message to two workers (a worker starting up requeues the
    in-flight backup of a shared channel), so each job is claimed once through the shared
    cache (Redis whenever workers are in use): ``add`` is an atomic SET NX.
    """
    return bool(await cache.aadd(f"enrichment-job:{job}", 1, timeout=JOB_CLAIM_SECONDS))
