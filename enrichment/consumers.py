"""``/ws/enrich/`` and ``/ws/decisions/`` (SPEC §10): parse a frame, await one service, send."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from channels.exceptions import ChannelFull
from pydantic import ValidationError

from controlui.plumbing.consumers import AuthenticatedJsonConsumer
from controlui.plumbing.json_guard import MAX_JSON_DEPTH, json_problem, text_problem
from enrichment import services
from enrichment.schemas import EnrichIn

MAX_FRAME_BYTES = 1024 * 1024
# Frames whose message.attachments carry base64 ``data`` may be this large (SPEC §10).
MAX_ATTACHMENT_FRAME_BYTES = 25 * 1024 * 1024
MAX_IN_FLIGHT = 32
DECISIONS_GROUP = services.DECISIONS_GROUP


def validation_message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        location = ".".join(str(item) for item in error["loc"])
        parts.append(f"message.{location}: {error['msg']}" if location else error["msg"])
    return "; ".join(parts)


def frame_too_large(size: int) -> str:
    if size <= MAX_ATTACHMENT_FRAME_BYTES:  # a plain frame: the long-standing message
        return f"frame too large (limit {MAX_FRAME_BYTES} bytes)"
    return (
        f"frame too large (limit {MAX_ATTACHMENT_FRAME_BYTES} bytes = 25 MiB for frames whose "
        f"attachments carry base64 data, {MAX_FRAME_BYTES} bytes otherwise)"
    )


def carries_attachment_data(frame: Any) -> bool:
    """Only frames uploading files earn the larger limit."""
    message = frame.get("message") if isinstance(frame, dict) else None
    attachments = message.get("attachments") if isinstance(message, dict) else None
    return isinstance(attachments, list) and any(
        isinstance(item, dict) and isinstance(item.get("data"), str) and item["data"]
        for item in attachments
    )


class EnrichConsumer(AuthenticatedJsonConsumer):
    """Many requests may be in flight on one socket; each gets progress frames then a result.

    Without Redis the pipeline runs here, as a task per request. With Redis the job goes to
    the ``enrichment`` worker channel and the worker's frames come back through
    ``enrich_frame`` on this consumer's own channel.
    """

    async def on_authenticated(self) -> None:
        self.in_flight: set[str] = set()
        self.tasks: set[asyncio.Task[None]] = set()

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        if text_data is None:
            await self.send_error(None, "binary frames are not supported; send JSON text frames")
            return
        size = len(text_data.encode("utf-8", "surrogatepass"))
        if size > MAX_ATTACHMENT_FRAME_BYTES:
            await self.send_error(None, frame_too_large(size))
            return
        try:
            frame = json.loads(text_data)
        except RecursionError:  # nesting beyond Python's own limit, well under 1 MiB
            await self.send_error(None, f"frame nested deeper than {MAX_JSON_DEPTH} levels")
            return
        except ValueError as exc:
            await self.send_error(None, f"malformed JSON: {exc}")
            return
        if size > MAX_FRAME_BYTES and not carries_attachment_data(frame):
            await self.send_error(None, frame_too_large(size))
            return
        await self.receive_frame(frame)

    async def receive_frame(self, frame: Any) -> None:
        if not isinstance(frame, dict):
            await self.send_error(None, "frame must be a JSON object")
            return
        request_id = frame.get("id")
        if not isinstance(request_id, str) or not request_id or len(request_id) > 200:
            await self.send_error(
                None, "id: required, a non-empty string of at most 200 characters"
            )
            return
        # NUL and lone surrogates cannot be stored (PostgreSQL) or relayed (Redis); an id
        # with one is not echoed back.
        id_problem = text_problem(request_id)
        if id_problem is not None:
            await self.send_error(None, f"id: {id_problem}")
            return
        problem = json_problem(frame)
        if problem is not None:
            await self.send_error(request_id, str(problem))
            return
        if frame.get("type") != "enrich":
            await self.send_error(
                request_id, f"unknown frame type {frame.get('type')!r} (expected 'enrich')"
            )
            return
        if request_id in self.in_flight:
            await self.send_error(request_id, "id: a request with this id is already in flight")
            return
        if len(self.in_flight) >= MAX_IN_FLIGHT:
            await self.send_error(
                request_id, f"too many requests in flight on this socket (limit {MAX_IN_FLIGHT})"
            )
            return
        try:
            message = EnrichIn.model_validate(frame.get("message"))
        except ValidationError as exc:
            await self.send_error(request_id, validation_message(exc))
            return
        self.in_flight.add(request_id)
        request = services.request_from_schema(message)
        if services.workers_enabled():
            try:
                await services.enrichment_dispatch(
                    request=request, request_id=request_id, reply_channel=self.channel_name
                )
            except ChannelFull:
                # Every worker is far behind: say so instead of dropping the socket.
                self.in_flight.discard(request_id)
                await self.send_error(request_id, "the enrichment workers are busy; try again")
            return
        task = asyncio.create_task(self.enrich_here(request_id, request))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def enrich_here(self, request_id: str, request: services.EnrichRequest) -> None:
        async def progress(event: dict[str, Any]) -> None:
            await self.send_json({"type": "progress", "id": request_id, **event})

        await self.send_frame(
            await services.enrichment_frame(
                request=request, request_id=request_id, on_progress=progress
            )
        )

    async def enrich_frame(self, event: dict[str, Any]) -> None:
        """A progress, result or error frame relayed from a Redis worker."""
        await self.send_frame(event["frame"])

    async def send_frame(self, frame: dict[str, Any]) -> None:
        if frame["type"] in ("result", "error"):
            self.in_flight.discard(frame["id"])
        await self.send_json(frame)

    async def send_error(self, request_id: str | None, error: str) -> None:
        await self.send_json({"type": "error", "id": request_id, "error": error})

    async def disconnect(self, code: int) -> None:
        tasks = list(getattr(self, "tasks", ()))
        for task in tasks:
            task.cancel()
        # Wait for them: each cancelled run records itself as interrupted on the way out.
        await asyncio.gather(*tasks, return_exceptions=True)


class DecisionsConsumer(AuthenticatedJsonConsumer):
    """Pushes a summary of every recorded run (the dashboard's live feed)."""

    async def on_authenticated(self) -> None:
        await self.channel_layer.group_add(DECISIONS_GROUP, self.channel_name)
        self.joined = True

    async def disconnect(self, code: int) -> None:
        if getattr(self, "joined", False):
            await self.channel_layer.group_discard(DECISIONS_GROUP, self.channel_name)

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        await self.send_json(
            {"type": "error", "id": None, "error": "this socket only pushes decisions"}
        )

    async def decision_recorded(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "decision", "run": event["run"]})
