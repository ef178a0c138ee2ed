"""``manage.py runworker enrichment`` with ``REDIS_URL``: run the jobs of the Redis Stream.

One process reads up to ``SLOTS`` entries at a time through the consumer group, runs each
with ``services.enrichment_frame`` as its own task, stores the final frame, then XACKs.
Three background loops keep it honest:

- heartbeat: the worker's score in the workers set, and XCLAIM ``JUSTID`` of its running
  entries, which resets their idle time (an entry that stays idle has a dead owner);
- reclaim: XAUTOCLAIM of entries idle longer than ``STALE_SECONDS``; their claimant is
  checked before anything runs (see ``take_over``);
- reading: XREADGROUP with a short block.

Redis or PostgreSQL going away never ends the process: every call to them is retried
with a capped exponential backoff until they answer again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import redis
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.db import DatabaseError, InterfaceError, close_old_connections, connection
from django.utils import timezone

from enrichment.jobs import stream as jobqueue
from enrichment.models import Run
from enrichment.services import runs as services

logger = logging.getLogger(__name__)

SLOTS = 32
# Jobs taken per read at most (while slots are free): few enough that workers share the load.
READ_BATCH = 4
STALE_SECONDS = 8.0
BLOCK_MS = 1000
MAX_ATTEMPTS = 3
LOCAL_SILENCE_SECONDS = 60.0
T = TypeVar("T")


async def retry(
    what: str, call: Callable[[], Awaitable[T]], errors: tuple[type[BaseException], ...]
) -> T:
    """Await ``call`` until it stops raising ``errors`` (0.1 s doubling to 5 s between)."""
    delay = 0.1
    while True:
        try:
            return await call()
        except errors as exc:
            logger.warning("%s failed (%s); retrying in %.1f s", what, exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


def _database_ping() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _fresh_connection_call(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    close_old_connections()  # drops a connection broken by a server restart
    return call(*args, **kwargs)


async def database(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a sync ORM call once the database answers, retrying while it does not.

    One thread hop per attempt: the call's own query tells a database that went away (its
    error is retried on a fresh connection), so it needs no ping of its own before it."""

    async def attempt() -> T:
        return await sync_to_async(_fresh_connection_call)(call, *args, **kwargs)

    return await retry("database", attempt, (DatabaseError, InterfaceError))


async def database_ready() -> None:
    """Wait until the database answers a query."""
    await database(_database_ping)


def run_of_job(job: str) -> tuple[int, str] | None:
    row = Run.objects.filter(job=job).values_list("pk", "outcome").order_by("pk").first()
    return (row[0], row[1]) if row else None


def run_close(job: str, outcome: str, error: str) -> int:
    """Finish the job's run if it is still ``running`` (its last save failed, or it died)."""
    return Run.objects.filter(job=job, outcome=Run.Outcome.RUNNING).update(
        outcome=outcome, error=error[:2000], finished_at=timezone.now()
    )


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A killed process its parent has not reaped yet still answers signal 0.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


class StreamWorker:
    def __init__(self, *, slots: int = SLOTS, stale_seconds: float = STALE_SECONDS) -> None:
        self.owner = services._owner()
        self.names = jobqueue.keys()
        self.layer = get_channel_layer()
        self.slots = asyncio.Semaphore(slots)
        self.stale_ms = int(stale_seconds * 1000)
        self.running: dict[str, asyncio.Task[None]] = {}  # entry id -> task
        self.connected_since: float | None = None
        self.stopping = asyncio.Event()

    @property
    def redis(self) -> Any:
        return jobqueue.client()

    async def serve(self) -> None:
        loops = [
            asyncio.create_task(self.heartbeat_loop()),
            asyncio.create_task(self.reclaim_loop()),
            asyncio.create_task(self.read_loop()),
        ]
        await self.stopping.wait()
        for task in loops:
            task.cancel()
        await asyncio.gather(*loops, return_exceptions=True)
        # Give running jobs a moment; the rest are cancelled (their runs close as
        # interrupted) and stay pending, so another worker answers them.
        jobs = list(self.running.values())
        if jobs:
            await asyncio.wait(jobs, timeout=5)
        for task in jobs:
            task.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        with contextlib.suppress(*jobqueue.REDIS_DOWN):
            await self.redis.zrem(self.names.workers, self.owner)

    def stop(self) -> None:
        self.stopping.set()

    # --- loops ---------------------------------------------------------------------

    async def ensure_group(self) -> None:
        try:
            await self.redis.xgroup_create(self.names.stream, jobqueue.GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def heartbeat_loop(self) -> None:
        while True:
            try:
                await self.redis.zadd(self.names.workers, {self.owner: time.time()})
                await self.redis.zremrangebyscore(self.names.workers, "-inf", time.time() - 3600)
                if self.running:  # keep our entries from looking abandoned
                    await self.redis.xclaim(
                        self.names.stream,
                        jobqueue.GROUP,
                        self.owner,
                        0,
                        list(self.running),
                        justid=True,
                    )
                if self.connected_since is None:
                    self.connected_since = time.monotonic()
            except jobqueue.REDIS_DOWN as exc:
                self.connected_since = None
                logger.warning("redis unreachable (%s); heartbeat paused", exc)
            except Exception:  # e.g. a ResponseError: the stream was lost with Redis' data
                logger.exception("heartbeat failed")
            await asyncio.sleep(jobqueue.HEARTBEAT_SECONDS)

    async def read_loop(self) -> None:
        delay = 0.1
        group_ready = False
        while True:
            free = await self._free_slots(READ_BATCH)
            try:
                if not group_ready:  # once, and again after Redis lost it (NOGROUP)
                    await self.ensure_group()
                    group_ready = True
                reply = await self.redis.xreadgroup(
                    jobqueue.GROUP,
                    self.owner,
                    {self.names.stream: ">"},
                    count=free,
                    block=BLOCK_MS,
                )
                delay = 0.1
            except Exception as exc:  # Redis down, group lost (NOGROUP), anything: retry
                group_ready = False
                self._release_slots(free)
                logger.warning("reading jobs failed (%s); retrying in %.1f s", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            entries = [entry for _, items in reply or [] for entry in items]
            self._release_slots(free - len(entries))
            for entry_id, fields in entries:
                self.start(entry_id, fields, taken_over=False)

    async def _free_slots(self, most: int) -> int:
        """Wait for one free slot, then take the others free right now (up to ``most``):
        under load one read fetches several jobs instead of a round trip per job."""
        await self.slots.acquire()
        taken = 1
        while taken < most and not self.slots.locked():
            await self.slots.acquire()  # free: returns at once
            taken += 1
        return taken

    def _release_slots(self, count: int) -> None:
        for _ in range(count):
            self.slots.release()

    async def reclaim_loop(self) -> None:
        while True:
            await asyncio.sleep(STALE_SECONDS / 4)
            try:
                await self.reclaim_once()
            except (*jobqueue.REDIS_DOWN, redis.ResponseError) as exc:
                logger.warning("reclaim failed: %s", exc)
            except Exception:  # the loop must outlive any surprise
                logger.exception("reclaim failed")

    async def reclaim_once(self) -> list[asyncio.Task[None]]:
        """Take over the entries idle longer than the stale limit; returns their tasks."""
        await self.ensure_group()
        _, entries, _ = await self.redis.xautoclaim(
            self.names.stream, jobqueue.GROUP, self.owner, self.stale_ms, "0-0", count=16
        )
        started = []
        for entry_id, fields in entries:
            if entry_id.decode() in self.running or fields is None:
                continue
            await self.slots.acquire()
            started.append(self.start(entry_id, fields, taken_over=True))
        return started

    def start(
        self, entry_id: bytes, fields: dict[bytes, bytes], *, taken_over: bool
    ) -> asyncio.Task[None]:
        key = entry_id.decode()
        job = {k.decode(): v.decode() for k, v in fields.items()}
        task = asyncio.create_task(self.handle(key, job, taken_over=taken_over))
        self.running[key] = task

        def done(_: asyncio.Task[None]) -> None:
            self.running.pop(key, None)
            self.slots.release()

        task.add_done_callback(done)
        return task

    # --- one job -------------------------------------------------------------------

    async def handle(self, entry_id: str, job: dict[str, str], *, taken_over: bool) -> None:
        try:
            claimed = await self.claim(job["job"])
            frame: dict[str, Any] | None
            if claimed is True:
                frame = await self.run(job)
            else:
                frame = await self.take_over(job, claimant=str(claimed)) if taken_over else None
            if frame is not None:
                await self.finish(entry_id, job, frame)
        except asyncio.CancelledError:
            raise
        except Exception:  # never let one bad entry take the worker down
            logger.exception("job %s failed in the worker", job.get("job"))

    async def claim(self, job: str) -> bool | str:
        """True when this worker now owns ``job``; otherwise the current claimant."""
        key = self.names.claim(job)

        async def attempt() -> bool | str:
            if await self.redis.set(key, self.owner, nx=True, ex=jobqueue.KEEP_SECONDS):
                return True
            current = await self.redis.get(key)
            return True if current is None or current.decode() == self.owner else current.decode()

        return await retry("claim", attempt, jobqueue.REDIS_DOWN)

    def claimant_alive(self, claimant: str, beats: dict[str, float]) -> bool:
        host, _, pid = claimant.rpartition(":")
        local = host == socket.gethostname() and pid.isdigit()
        if local and not _pid_alive(int(pid)):
            return False  # on this machine the kernel knows for sure
        # Otherwise trust heartbeats, but only once ours have flowed for a full TTL (after
        # a Redis restart everybody's last beat is old). A live local pid without a beat
        # for a minute is a reused pid, not our worker.
        if (
            self.connected_since is None
            or time.monotonic() - self.connected_since < jobqueue.HEARTBEAT_TTL
        ):
            return True
        silence = LOCAL_SILENCE_SECONDS if local else jobqueue.HEARTBEAT_TTL
        return beats.get(claimant, 0.0) > time.time() - silence

    async def take_over(self, job: dict[str, str], *, claimant: str) -> dict[str, Any] | None:
        """An entry idle too long, claimed by ``claimant``: answer it once, or leave it."""
        beats = {
            member.decode(): score
            for member, score in await retry(
                "heartbeats",
                lambda: self.redis.zrange(self.names.workers, 0, -1, withscores=True),
                jobqueue.REDIS_DOWN,
            )
        }
        if self.claimant_alive(claimant, beats):
            return None  # still being run; its owner acknowledges it
        job_id, request_id = job["job"], job["id"]
        stored = await stored_final(job_id)
        if stored is not None:
            return stored  # finished, only the acknowledgement was lost
        run = await database(run_of_job, job_id)
        if run is None:  # the dead worker never started it: run it here
            await retry(
                "claim",
                lambda: self.redis.set(
                    self.names.claim(job_id), self.owner, ex=jobqueue.KEEP_SECONDS
                ),
                jobqueue.REDIS_DOWN,
            )
            return await self.run(job)
        run_id, _ = run
        await database(
            run_close,
            job_id,
            Run.Outcome.INTERRUPTED,
            "the worker running it stopped before it finished",
        )
        logger.warning("job %s: worker %s died during run %s", job_id, claimant, run_id)
        return {
            "type": "error",
            "id": request_id,
            "error": f"interrupted: the worker running this request stopped (run {run_id})",
        }

    async def run(self, job: dict[str, str]) -> dict[str, Any]:
        """Run the job's enrichment; a run is never left ``running`` and never doubled."""
        request = services.EnrichRequest.from_json(json.loads(job["request"]))
        request_id, job_id = job["id"], job["job"]

        async def progress(event: dict[str, Any]) -> None:
            await self.relay(job, {"type": "progress", "id": request_id, **event})

        frame: dict[str, Any] = {}
        for attempt in range(MAX_ATTEMPTS):
            if attempt:
                # The first attempt needs no ping (a database that is down fails it before
                # its run exists, and the run lookup below waits for the database to answer).
                await database_ready()  # wait out a database restart before trying again
            # The run row names its job (in the same INSERT), so "did this job start a
            # run?" has an answer after any crash.
            frame = await services.enrichment_frame(
                request=request, request_id=request_id, on_progress=progress, job=job_id
            )
            if frame["type"] == "result":
                break  # only sent once its run is stored as finished (run_finish_or_fail)
            run = await database(run_of_job, job_id)
            if run is None and frame["type"] == "error":
                continue  # failed before its run existed (database gone?): run it again
            if run is not None and run[1] == Run.Outcome.RUNNING:
                # Its last save failed (the database went away): close it here, and say so.
                error = f"enrichment failed: the database went away before run {run[0]} was saved"
                await database(run_close, job_id, Run.Outcome.ERROR, error)
                frame = {"type": "error", "id": request_id, "error": error}
            break
        return frame

    async def relay(self, job: dict[str, str], frame: dict[str, Any]) -> None:
        """Best effort: a lost progress frame is harmless, finals are also stored."""
        try:
            await self.layer.send(
                job["reply_channel"], {"type": "enrich.frame", "frame": frame, "job": job["job"]}
            )
        except Exception as exc:  # Redis down or the socket's channel full
            logger.info("could not relay a frame of job %s: %s", job["job"], exc)

    async def finish(self, entry_id: str, job: dict[str, str], frame: dict[str, Any]) -> None:
        """Store the final frame, then acknowledge: a crash in between only repeats it."""
        names = self.names

        async def store_and_ack() -> None:
            # One round trip; MULTI/EXEC runs the three in order, and all or none of them.
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.set(names.final(job["job"]), json.dumps(frame), ex=jobqueue.KEEP_SECONDS)
                pipe.xack(names.stream, jobqueue.GROUP, entry_id)
                pipe.xdel(names.stream, entry_id)
                await pipe.execute()

        await retry("storing a final frame", store_and_ack, jobqueue.REDIS_DOWN)
        await self.relay(job, frame)


async def stored_final(job: str) -> dict[str, Any] | None:
    found = await retry("final frame", lambda: jobqueue.finals_fetch([job]), jobqueue.REDIS_DOWN)
    return found.get(job)


def serve_forever() -> None:
    """The worker process: SIGTERM/SIGINT stop it after its running jobs (5 s grace)."""

    async def main() -> None:
        worker = StreamWorker()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, worker.stop)
        await worker.serve()

    asyncio.run(main())
