"""``manage.py runworker enrichment`` with ``REDIS_URL``: a Dramatiq worker of the job queue.

One process runs ``SLOTS`` Dramatiq worker threads; each job is the async actor
``enrich_job``, run on the process' one event loop (the ``JobLoop`` middleware), so
the jobs share the process' database connections, channel layer and extraction pool.

A job (``JobRunner.handle``) claims its id, runs ``services.enrichment_frame``, stores the
final frame, relays it, and returns: Dramatiq then acknowledges the message. Around it:

- a message redelivered after its worker died is answered once (``take_over``);
- a job that failed before its run existed (the database unreachable) raises
  :class:`TransientFailure`: Dramatiq's ``Retries`` sends it again with exponential
  backoff, up to ``ENRICHMENT_JOB_RETRIES`` times, then to the dead-letter queue, where
  ``DeadLetters`` answers the client and records a ``dead-letter`` run (operators see it in
  the history and the admin, and can run it again);
- a heartbeat thread keeps the worker in the workers set and runs Dramatiq's queue
  maintenance (messages of workers whose heartbeat stopped go back on the queue).

Redis going away never ends the process: calls to it inside a job are retried with a
capped exponential backoff until it answers again, and Dramatiq's consumer reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, Literal, TypeVar

import dramatiq
import redis
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import DatabaseError, InterfaceError, close_old_connections, connection
from django.utils import timezone
from dramatiq.common import dq_name
from dramatiq.middleware import AgeLimit, Middleware, Retries, ShutdownNotifications

from enrichment.jobs import queue as jobqueue
from enrichment.models import Run
from enrichment.services import runs as services
from enrichment.services.dead_letters import dead_letters_record

logger = logging.getLogger(__name__)

# Jobs one worker process runs at once (Dramatiq worker threads, each awaiting one job).
SLOTS = 32
# Backoff of a job's retries (Dramatiq doubles it from the first up to the last).
RETRY_MIN_BACKOFF_MS = 1_000
RETRY_MAX_BACKOFF_MS = 15_000
LOCAL_SILENCE_SECONDS = 60.0
# Every this many heartbeats, dead letters not recorded yet (database down) are recorded.
DEAD_LETTER_SYNC_BEATS = 10
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


class TransientFailure(Exception):
    """The job could not start (the database or Redis was unreachable): try it again later."""


def retry_when(retries: int, exception: BaseException) -> bool:
    """Dramatiq's retry predicate: transient failures only, up to the configured count."""
    return isinstance(exception, TransientFailure) and retries < int(
        settings.ENRICHMENT_JOB_RETRIES
    )


class JobRunner:
    """Runs the jobs of one worker process (every job of the process goes through one)."""

    def __init__(self) -> None:
        self.owner = services._owner()
        self.names = jobqueue.keys()
        self.layer = get_channel_layer()
        self.connected_since: float | None = None
        self.running: set[str] = set()  # job ids this process is answering now

    @property
    def redis(self) -> Any:
        return jobqueue.client()

    def beat(self, sync_client: Any, broker: jobqueue.JobBroker) -> None:
        """One heartbeat: the workers set, and Dramatiq's own (with its queue maintenance)."""
        try:
            now = time.time()
            with sync_client.pipeline(transaction=False) as pipe:
                pipe.zadd(self.names.workers, {self.owner: now})
                pipe.zremrangebyscore(self.names.workers, "-inf", now - 3600)
                pipe.execute()
            # Dramatiq's heartbeat, then its maintenance of the queue and of its retries.
            broker.do_qsize(jobqueue.QUEUE)
            broker.do_qsize(dq_name(jobqueue.QUEUE))
            if self.connected_since is None:
                self.connected_since = time.monotonic()
        except (*jobqueue.REDIS_DOWN, redis.RedisError) as exc:
            self.connected_since = None
            logger.warning("redis unreachable (%s); heartbeat paused", exc)

    def leave(self, sync_client: Any) -> None:
        with contextlib.suppress(*jobqueue.REDIS_DOWN, redis.RedisError):
            sync_client.zrem(self.names.workers, self.owner)

    # --- one job -------------------------------------------------------------------

    async def handle(self, job: dict[str, str]) -> None:
        """Answer one delivery of ``job``: run it, or (redelivered) answer it once."""
        job_id = job["job"]
        if job_id in self.running:
            # Redelivered to the process answering it (its heartbeat looked stale, e.g.
            # across a Redis restart): that delivery answers, this one is acknowledged.
            return
        self.running.add(job_id)
        try:
            claimed = await self.claim(job_id)
            frame: dict[str, Any] | None
            if claimed is True:
                frame = await self.run(job)
            elif claimed == self.owner:
                frame = await self.answer_again(job)  # claimed here before: answered or cut
            else:
                frame = await self.take_over(job, claimed)
            if frame is not None:
                await self.finish(job, frame)
        finally:
            self.running.discard(job_id)

    async def claim(self, job: str) -> Literal[True] | str:
        """True when this delivery made this worker the owner of ``job``; otherwise the
        claimant (this worker's own name for a job it claimed before)."""
        key = self.names.claim(job)

        async def attempt() -> Literal[True] | str:
            if await self.redis.set(key, self.owner, nx=True, ex=jobqueue.KEEP_SECONDS):
                return True
            current = await self.redis.get(key)
            return True if current is None else str(current.decode())

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

    async def take_over(self, job: dict[str, str], claimant: str) -> dict[str, Any] | None:
        """A redelivered job claimed by ``claimant``: answer it once, or leave it."""
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
        return await self.answer_again(job)

    async def answer_again(self, job: dict[str, str]) -> dict[str, Any] | None:
        """A job whose claimant is gone: its stored answer, the news that its run was cut
        short, or (never started) its run now."""
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
        logger.warning("job %s: its worker died during run %s", job_id, run_id)
        return {
            "type": "error",
            "id": request_id,
            "error": f"interrupted: the worker running this request stopped (run {run_id})",
        }

    async def run(self, job: dict[str, str]) -> dict[str, Any]:
        """Run the job's enrichment; a run is never left ``running`` and never doubled.

        Failing before its run exists (the database unreachable) raises
        :class:`TransientFailure` with the claim released, so Dramatiq's retry may run it on
        any worker.
        """
        request = services.EnrichRequest.from_json(json.loads(job["request"]))
        request_id, job_id = job["id"], job["job"]

        async def progress(event: dict[str, Any]) -> None:
            await self.relay(job, {"type": "progress", "id": request_id, **event})

        # The run row names its job (in the same INSERT), so "did this job start a run?"
        # has an answer after any crash.
        frame = await services.enrichment_frame(
            request=request, request_id=request_id, on_progress=progress, job=job_id
        )
        if frame["type"] == "result":
            return frame  # only sent once its run is stored as finished (run_finish_or_fail)
        try:
            run = await sync_to_async(_fresh_connection_call)(run_of_job, job_id)
        except (DatabaseError, InterfaceError) as exc:
            await self.release(job_id)
            raise TransientFailure(f"the database is unreachable ({exc})") from None
        if run is None:
            await self.release(job_id)
            raise TransientFailure(f"it failed before its run was recorded ({frame['error']})")
        if run[1] == Run.Outcome.RUNNING:
            # Its last save failed (the database went away): close it here, and say so.
            error = f"enrichment failed: the database went away before run {run[0]} was saved"
            await database(run_close, job_id, Run.Outcome.ERROR, error)
            frame = {"type": "error", "id": request_id, "error": error}
        return frame

    async def release(self, job: str) -> None:
        """Give the claim back (ours only), so a retry may run on any worker."""

        async def attempt() -> None:
            key = self.names.claim(job)
            if (await self.redis.get(key) or b"").decode() == self.owner:
                await self.redis.delete(key)

        await retry("releasing a claim", attempt, jobqueue.REDIS_DOWN)

    async def relay(self, job: dict[str, str], frame: dict[str, Any]) -> None:
        """Best effort: a lost progress frame is harmless, finals are also stored."""
        try:
            await self.layer.send(
                job["reply_channel"], {"type": "enrich.frame", "frame": frame, "job": job["job"]}
            )
        except Exception as exc:  # Redis down or the socket's channel full
            logger.info("could not relay a frame of job %s: %s", job["job"], exc)

    async def finish(self, job: dict[str, str], frame: dict[str, Any]) -> None:
        """Store the final frame, then relay it; Dramatiq acknowledges the message after."""
        key = self.names.final(job["job"])

        async def store() -> None:
            await self.redis.set(key, json.dumps(frame), ex=jobqueue.KEEP_SECONDS)

        await retry("storing a final frame", store, jobqueue.REDIS_DOWN)
        await self.relay(job, frame)


async def stored_final(job: str) -> dict[str, Any] | None:
    found = await retry("final frame", lambda: jobqueue.finals_fetch([job]), jobqueue.REDIS_DOWN)
    return found.get(job)


_runner: JobRunner | None = None


def runner() -> JobRunner:
    global _runner
    if _runner is None:
        _runner = JobRunner()
    return _runner


class JobLoop(Middleware):
    """The worker process' one event loop, in a thread of its own: every job's coroutine runs
    on it, so the jobs share database connections, the channel layer and the extraction pool.

    Dramatiq's ``AsyncIO`` middleware does the same, but each worker thread waiting for its
    job wakes ten times a second to look for interrupts (Dramatiq's ``TimeLimit``): with 32
    jobs in flight that polling cost more CPU than the jobs' own Redis work. Here the thread
    simply waits, and the job's deadline is the coroutine's own timeout.
    """

    loop: asyncio.AbstractEventLoop | None = None
    thread: threading.Thread | None = None

    def before_worker_boot(self, broker: Any, worker: Any) -> None:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="enrichment-jobs", daemon=True)
        thread.start()
        JobLoop.loop, JobLoop.thread = loop, thread

    def after_worker_shutdown(self, broker: Any, worker: Any) -> None:
        loop, thread = JobLoop.loop, JobLoop.thread
        JobLoop.loop = JobLoop.thread = None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)


def enrich_job(job: dict[str, str]) -> None:
    """The Dramatiq actor: one enrichment job, run on the process' event loop."""
    _on_job_loop(_job_within_deadline(job))


async def _job_within_deadline(job: dict[str, str]) -> None:
    # Past the deadline the client has had its error frame and the sweeper closes the run;
    # the job stops here too (its run records itself as interrupted on the way out).
    async with asyncio.timeout(float(settings.ENRICHMENT_JOB_DEADLINE_SECONDS)):
        await runner().handle(job)


def worker_middleware() -> list[Middleware]:
    """What a worker's broker runs: Dramatiq's own middleware (a message older than the job
    deadline is not run: its client was answered), retries, dead letters, the job loop."""
    return [AgeLimit(), ShutdownNotifications(), Retries(), DeadLetters(), JobLoop()]


class DeadLetters(Middleware):
    """A job given up on (retries exhausted, or a failure not worth retrying) is answered
    with an error frame naming why, and recorded as a ``dead-letter`` run."""

    def after_nack(self, broker: Any, message: Any) -> None:
        job = dict(message.args[0]) if message.args else {}
        if "job" not in job:
            return
        if "traceback" not in message.options:  # not run at all: AgeLimit skipped it
            deadline = int(settings.ENRICHMENT_JOB_DEADLINE_SECONDS)
            message.options["traceback"] = (
                f"it waited in the queue longer than the job deadline ({deadline} s)"
            )
        # The dead-letter queue holds the message as it was last sent; store it with its
        # last attempt counted and its traceback, so its record says why it was given up.
        with contextlib.suppress(*jobqueue.REDIS_DOWN, redis.RedisError):
            broker.client.hset(
                jobqueue.keys().dead_letter_messages,
                message.options["redis_message_id"],
                message.encode(),
            )
        frame = {
            "type": "error",
            "id": job.get("id"),
            "error": jobqueue.dead_letter_error(message.options),
        }
        try:
            _on_job_loop(runner().finish(job, frame))
        except Exception:  # the client's deadline answers it instead
            logger.exception("could not answer dead letter %s", job["job"])
        dead_letters_sync()


def _on_job_loop(step: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on the process' job loop from another thread and wait for it: with
    the jobs' Redis client and channel layer (a loop of its own would make new ones)."""
    loop = JobLoop.loop
    if loop is None:
        step.close()
        raise RuntimeError("the worker's event loop is not running")
    return asyncio.run_coroutine_threadsafe(step, loop).result()


class DeadLetterSync:
    """Records the queue's dead letters that have no run yet; the database may be down when a
    job is given up, so each heartbeat's sync tries again.

    Reading the letters means reading their messages (attachments of up to 25 MiB) and
    looking their jobs up: that is done only when the dead-letter queue changed since the
    last sync that recorded everything in it (its size or its newest letter).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()  # the heartbeat and a job's thread may sync at once
        self.recorded: tuple[int, float | None] | None = None

    def __call__(self) -> None:
        with self.lock:
            try:
                mark = jobqueue.dead_letters_mark()
                if mark == self.recorded:
                    return
                dead_letters_record(jobqueue.dead_letters_read())
                # A letter given up between the two reads changes the mark: read again then.
                self.recorded = mark
            except (DatabaseError, InterfaceError, *jobqueue.REDIS_DOWN, redis.RedisError) as exc:
                logger.warning("dead letters not recorded yet (%s)", exc)
            finally:
                with contextlib.suppress(DatabaseError, RuntimeError):
                    connection.close()


dead_letters_sync = DeadLetterSync()


def worker_broker() -> jobqueue.JobBroker:
    """A broker with the worker's middleware and the ``enrich_job`` actor declared."""
    broker = jobqueue.broker_create(middleware=worker_middleware())
    dramatiq.Actor(
        enrich_job,
        broker=broker,
        actor_name=jobqueue.ACTOR,
        queue_name=jobqueue.QUEUE,
        priority=0,
        options={
            "retry_when": retry_when,
            "min_backoff": RETRY_MIN_BACKOFF_MS,
            "max_backoff": RETRY_MAX_BACKOFF_MS,
            # A job older than the deadline was answered with an error frame already.
            "max_age": int(settings.ENRICHMENT_JOB_DEADLINE_SECONDS * 1000),
        },
    )
    return broker


def serve_forever(*, slots: int = SLOTS) -> None:
    """The worker process: SIGTERM/SIGINT stop it after its running jobs (5 s grace)."""
    broker = worker_broker()
    dramatiq.set_broker(broker)
    worker = dramatiq.Worker(broker, queues={jobqueue.QUEUE}, worker_threads=slots)
    # Dramatiq prefetches twice its threads: jobs carry attachments of up to 25 MiB, so a
    # worker holds no more than it runs (and other workers take the rest).
    worker.queue_prefetch = slots
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    sync_client = redis.Redis.from_url(
        str(settings.REDIS_URL), socket_connect_timeout=2, socket_timeout=5
    )
    job_runner = runner()
    job_runner.beat(sync_client, broker)
    worker.start()
    beats = 0
    try:
        while not stopping.wait(jobqueue.HEARTBEAT_SECONDS):
            job_runner.beat(sync_client, broker)
            beats += 1
            if beats % DEAD_LETTER_SYNC_BEATS == 0:
                dead_letters_sync()
    finally:
        job_runner.leave(sync_client)
        worker.stop(timeout=5_000)
        broker.close()
