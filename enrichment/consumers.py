"""``/ws/enrich/`` and ``/ws/decisions/`` (SPEC §10): parse a frame, await one service, send."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from channels.exceptions import ChannelFull
from django.conf import settings
from django.utils import timezone
from pydantic import ValidationError

from common import metrics
from common.consumers import AuthenticatedJsonConsumer
from common.json_guard import MAX_JSON_DEPTH, json_problem, text_problem
from enrichment.api.enrich import EnrichIn
from enrichment.jobs import queue as jobqueue
from enrichment.jobs.dispatch import enrichment_dispatch, workers_enabled
from enrichment.services import runs as services
from enrichment.services.dead_letters import DeadLetter, dead_letters_record
from enrichment.services.live_feed import DECISIONS_GROUP

logger = logging.getLogger(__name__)

MAX_FRAME_BYTES = 1024 * 1024
# Frames whose message.attachments carry base64 ``data`` may be this large (SPEC §10).
MAX_ATTACHMENT_FRAME_BYTES = 25 * 1024 * 1024
MAX_IN_FLIGHT = 32
ENRICH_ROUTE = "/ws/enrich/"  # the label of its requests in ``/metrics``
DECISIONS_GROUP = DECISIONS_GROUP
# How often the process looks for stored final frames of its sockets' queued jobs.
POLL_SECONDS = 1.0
# How long the answers to jobs lost past the deadline wait for their record to be written.
RECORD_PATIENCE = 5.0
# A job nobody has started after this long, with no worker alive, gets a "queued" notice.
NOTICE_AFTER_SECONDS = 2.0
QUEUED_NO_WORKER = "Queued: no enrichment worker is running; the request runs when one starts."


def deadline_error(seconds: float, job: str) -> str:
    """The error frame's text for a job with no answer by the deadline."""
    return (
        f"deadline: no answer within {seconds:.0f} s (job {job}); the worker or the job "
        "queue lost it, try again"
    )


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
    the job queue (``enrichment.jobs.queue``, Dramatiq) and the worker's frames come back
    through ``enrich_frame`` on this consumer's own channel; the process' ``QueuedJobs``
    also fetches stored final frames, so an answer the channel layer lost still arrives.
    """

    # A frame's database work is ``services.runs_start``'s hop (in-process) or none (queued to
    # workers): runs_start checks the connections itself, so receive skips Channels' own hop.
    checks_own_connections = frozenset({"websocket.receive"})

    async def on_authenticated(self) -> None:
        # request id -> job id (None for jobs handed over in process).
        self.in_flight: dict[str, str | None] = {}
        # request id -> when its frame arrived (``/metrics``: time to the final frame).
        self.arrived: dict[str, float] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    @property
    def channel_receive(self) -> Callable[[], Awaitable[dict[str, Any]]]:
        return self._channel_receive

    @channel_receive.setter
    def channel_receive(self, receive: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        # Channels sets this once per socket; a Redis restart would make it raise and close
        # every socket, so wait for Redis instead (QueuedJobs delivers finals meanwhile).
        async def patient_receive() -> dict[str, Any]:
            delay = 0.1
            while True:
                try:
                    return await receive()
                except jobqueue.REDIS_DOWN as exc:
                    logger.warning("channel layer unreachable (%s); retrying", exc)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 5.0)

        self._channel_receive = patient_receive

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        if text_data is None:
            await self.send_error(None, "binary frames are not supported; send JSON text frames")
            return
        # ASCII (JSON with base64 attachments) is measured without a second copy of the frame.
        size = (
            len(text_data)
            if text_data.isascii()
            else len(text_data.encode("utf-8", "surrogatepass"))
        )
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
        request = services.request_from_schema(message)
        self.arrived[request_id] = time.monotonic()
        if jobqueue.queue_mode():
            await self.submit(request_id, request)
            return
        self.in_flight[request_id] = None
        if workers_enabled():
            try:
                await enrichment_dispatch(
                    request=request, request_id=request_id, reply_channel=self.channel_name
                )
            except ChannelFull:
                # Every worker is far behind: say so instead of dropping the socket.
                self.in_flight.pop(request_id, None)
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

    async def submit(self, request_id: str, request: services.EnrichRequest) -> None:
        """Queue one job on the stream; a refusal is an error frame, never silence."""
        try:
            job = await jobqueue.job_submit(
                request=request, request_id=request_id, reply_channel=self.channel_name
            )
        except ChannelFull:
            await self.send_error(request_id, "the enrichment workers are busy; try again")
            return
        except jobqueue.QueueUnavailable:
            await self.send_error(
                request_id, "the job queue (Redis) is unavailable; nothing was run, try again"
            )
            return
        self.in_flight[request_id] = job
        # Kept to record the job if it is lost (its attachments' data are not needed for that).
        queued_jobs().add(job, self, request_id, dataclasses.replace(request, attachments=()))

    async def enrich_frame(self, event: dict[str, Any]) -> None:
        """A progress, result or error frame relayed from a worker (or fetched, if final).

        A final frame counts once: repeats (relayed and fetched, or a redelivered job) and
        frames of a job this socket no longer waits for are dropped.
        """
        frame = event["frame"]
        job = event.get("job")
        if job is not None and self.in_flight.get(frame["id"]) != job:
            return  # a frame of a job this socket no longer waits for (late progress too)
        if frame["type"] != "progress" and frame["id"] not in self.in_flight:
            return
        await self.send_frame(frame)

    async def send_frame(self, frame: dict[str, Any]) -> None:
        if frame["type"] in ("result", "error"):
            job = self.in_flight.pop(frame["id"], None)
            if job is not None:
                queued_jobs().discard(job)
            self.answered(frame["id"], frame["type"])
        await self.send_json(frame)

    async def send_error(self, request_id: str | None, error: str) -> None:
        if request_id is not None:
            self.answered(request_id, "error")
        await self.send_json({"type": "error", "id": request_id, "error": error})

    def answered(self, request_id: str, outcome: str) -> None:
        arrived = getattr(self, "arrived", {}).pop(request_id, None)
        if arrived is not None:
            metrics.websocket_request_observe(ENRICH_ROUTE, outcome, time.monotonic() - arrived)

    async def disconnect(self, code: int) -> None:
        for job in getattr(self, "in_flight", {}).values():
            if job is not None:
                queued_jobs().discard(job)
        tasks = list(getattr(self, "tasks", ()))
        for task in tasks:
            task.cancel()
        # Wait for them: each cancelled run records itself as interrupted on the way out.
        await asyncio.gather(*tasks, return_exceptions=True)


@dataclass(frozen=True)
class _Queued:
    socket: EnrichConsumer
    request_id: str
    request: services.EnrichRequest
    submitted: float = field(default_factory=time.monotonic)


class QueuedJobs:
    """The queued jobs of every socket of this process, looked after by one task.

    Once a second, while any job waits: one read of the stored finals of all of them
    (delivered to their socket, so an answer the channel layer lost still arrives), and for
    jobs nobody has claimed after ``NOTICE_AFTER_SECONDS`` with no worker alive, a "queued"
    notice, once. (Each socket used to poll for its own jobs: with hundreds of sockets
    waiting, a Redis round trip per socket per second, more than four per answer under
    ``bench/ws_load.py --redis``.)
    """

    def __init__(self) -> None:
        self.jobs: dict[str, _Queued] = {}
        self.noticed: set[str] = set()
        self.task: asyncio.Task[None] | None = None

    def add(
        self, job: str, socket: EnrichConsumer, request_id: str, request: services.EnrichRequest
    ) -> None:
        self.jobs[job] = _Queued(socket, request_id, request)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self.watch())

    def discard(self, job: str) -> None:
        self.jobs.pop(job, None)
        self.noticed.discard(job)

    async def watch(self) -> None:
        while self.jobs:
            await asyncio.sleep(POLL_SECONDS)
            try:
                await self.poll()
            except jobqueue.REDIS_DOWN as exc:
                logger.info("queued jobs: redis unreachable (%s)", exc)
            except Exception:  # every socket's safety net: keep watching after a surprise
                logger.exception("queued jobs: poll failed; trying again in a second")

    async def poll(self) -> None:
        await self.answer_overdue()
        jobs = dict(self.jobs)
        finals = await jobqueue.finals_fetch(list(jobs))
        for job, frame in finals.items():
            await self.tell(jobs[job].socket.enrich_frame({"frame": frame, "job": job}))
        now = time.monotonic()
        waiting = [
            job
            for job, queued in jobs.items()
            if job not in finals
            and job not in self.noticed
            and now - queued.submitted > NOTICE_AFTER_SECONDS
        ]
        started = await jobqueue.claims_fetch(waiting)
        waiting = [job for job in waiting if job not in started]
        if waiting and await jobqueue.live_worker_count() == 0:
            for job in waiting:
                if job not in self.jobs:
                    continue  # answered while this poll was waiting for Redis
                self.noticed.add(job)
                notice = {"type": "progress", "stage": "queued", "text": QUEUED_NO_WORKER}
                await self.tell(jobs[job].socket.send_json({**notice, "id": jobs[job].request_id}))

    async def answer_overdue(self) -> None:
        """Every job ends: one with no final by the deadline gets an ``error`` frame.

        Runs before Redis is asked anything, so a job lost with Redis (restarted without
        persistence), or a Redis that stays down, still gets its answer.
        """
        deadline = float(settings.ENRICHMENT_JOB_DEADLINE_SECONDS)
        now = time.monotonic()
        overdue = [
            (job, queued)
            for job, queued in list(self.jobs.items())
            if now - queued.submitted > deadline
        ]
        if not overdue:
            return
        for job, _ in overdue:
            self.discard(job)
        errors = {job: deadline_error(deadline, job) for job, _ in overdue}
        # Recorded before the answers go out: a client told its job was lost finds it in the
        # decision log.
        await self.record(
            [
                DeadLetter(job, queued.request, errors[job], timezone.now())
                for job, queued in overdue
            ]
        )
        for job, queued in overdue:
            frame = {"type": "error", "id": queued.request_id, "error": errors[job]}
            logger.warning("job %s: no answer within %.0f s, answered with an error", job, deadline)
            await self.tell(queued.socket.enrich_frame({"frame": frame, "job": job}))

    async def record(self, lost: list[DeadLetter]) -> None:
        """A job with no answer by the deadline is recorded as a ``dead-letter`` run, unless
        it has a run (a worker started it: that run says how it ended, or the sweeper will).
        A job still queued is not run later: the workers skip a job older than the deadline.
        The answers wait at most RECORD_PATIENCE seconds for the database."""
        try:
            await asyncio.wait_for(sync_to_async(dead_letters_record)(lost), RECORD_PATIENCE)
        except Exception:  # the answers go out anyway; a database that is down loses the record
            logger.exception("could not record %d job(s) lost past the deadline", len(lost))

    async def tell(self, sending: Awaitable[None]) -> None:
        try:
            await sending
        except Exception:  # one socket that cannot be written to must not starve the others
            logger.exception("queued jobs: a frame could not be sent to its socket")


_queued_jobs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, QueuedJobs] = (
    weakref.WeakKeyDictionary()
)


def queued_jobs() -> QueuedJobs:
    """This event loop's ``QueuedJobs`` (one per process under daphne)."""
    return _queued_jobs.setdefault(asyncio.get_running_loop(), QueuedJobs())


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
