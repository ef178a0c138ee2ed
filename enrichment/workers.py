"""The ``enrichment`` worker channel, served by ``python manage.py runworker enrichment``."""

from __future__ import annotations

from typing import Any

from channels.consumer import AsyncConsumer

from enrichment import services


class EnrichmentWorker(AsyncConsumer):
    """Runs jobs sent by ``/ws/enrich/`` consumers and sends every frame back to their socket."""

    async def enrich_job(self, message: dict[str, Any]) -> None:
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
