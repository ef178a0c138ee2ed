"""The ``enrichment`` worker channel, served by ``python manage.py runworker enrichment``."""

from __future__ import annotations

import asyncio
from typing import Any

from channels.consumer import AsyncConsumer

from enrichment.jobs.dispatch import job_claim
from enrichment.services import runs as services

# Jobs one worker process runs at once. Channels hands a consumer its messages one at a
# time, so each job runs as its own task: a slow link must not hold up every other job.
MAX_CONCURRENT_JOBS = 32


class EnrichmentWorker(AsyncConsumer):
    """Runs jobs sent by ``/ws/enrich/`` consumers and sends every frame back to their socket."""

    async def enrich_job(self, message: dict[str, Any]) -> None:
        if not await job_claim(message["job"]):
            return  # another worker already runs it (redelivered message)
        if not hasattr(self, "jobs"):
            self.jobs: set[asyncio.Task[None]] = set()
            self.slots = asyncio.Semaphore(MAX_CONCURRENT_JOBS)
        await self.slots.acquire()  # when full, the next job waits here (in arrival order)
        task = asyncio.create_task(self.run_job(message))
        self.jobs.add(task)
        task.add_done_callback(self.job_done)

    def job_done(self, task: asyncio.Task[None]) -> None:
        self.jobs.discard(task)
        self.slots.release()

    async def run_job(self, message: dict[str, Any]) -> None:
        reply_channel = message["reply_channel"]
        request_id = message["id"]

        async def relay(frame: dict[str, Any]) -> None:
            await self.channel_layer.send(reply_channel, {"type": "enrich.frame", "frame": frame})

        async def progress(event: dict[str, Any]) -> None:
            await relay({"type": "progress", "id": request_id, **event})

        request = services.EnrichRequest.from_json(message["request"])
        await relay(
            await services.enrichment_frame(
                request=request, request_id=request_id, on_progress=progress
            )
        )
