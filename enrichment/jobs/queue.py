"""The enrichment job queue: Dramatiq on Redis (``dramatiq.brokers.redis.RedisBroker``).

With ``REDIS_URL`` every job of ``/ws/enrich/`` (and of ``POST /api/enrich`` while a worker
is alive) is one Dramatiq message on the queue ``enrichment``; ``manage.py runworker
enrichment`` processes run it (``enrichment.jobs.worker``). Dramatiq gives at-least-once
delivery (a message stays in its worker's ack set until it is acknowledged, and the
messages of a worker whose heartbeat stops are put back on the queue), retries with
exponential backoff and a dead-letter queue (``<namespace>:enrichment.XQ``). On top of it
the effect is once:

- ``<prefix>:enrichment:claim:<job>`` (SET NX) names the worker that runs a job, so a
  redelivered message whose claimant is alive is left alone;
- every run row carries its job id (``Run.job``), so a takeover knows whether the dead
  worker had started the run (then it is closed as ``interrupted`` and answered with an
  error frame) or not (then it runs now);
- the final ``result``/``error`` frame is stored under ``<prefix>:enrichment:final:<job>``
  *before* the message is acknowledged, and the socket's consumer polls for it, so a frame
  lost on the channel layer (Redis restarted mid-send) still reaches the client.

Workers add themselves to the sorted set ``<prefix>:enrichment:workers`` (score = time of
their last heartbeat); ``/api/health`` and ``/metrics`` read it with the queue's lengths.

Every key, Dramatiq's namespace included, starts with the channel layer's prefix, so
deployments (and test runs) sharing one Redis never see each other's jobs.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
import weakref
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

import redis
import redis.asyncio as aioredis
from channels.exceptions import ChannelFull
from channels.layers import get_channel_layer
from django.conf import settings
from dramatiq import Message
from dramatiq.brokers.redis import RedisBroker

from common.errors import DomainError
from enrichment.jobs.dispatch import JOB_CLAIM_SECONDS, workers_enabled
from enrichment.services import runs as services
from enrichment.services.dead_letters import DeadLetter

QUEUE = "enrichment"
ACTOR = "enrich_job"
# A worker beats this often; one silent for HEARTBEAT_TTL seconds counts as gone (and
# Dramatiq puts the messages it held back on the queue).
HEARTBEAT_SECONDS = 1.0
HEARTBEAT_TTL = 5.0
# How long finals and claims are remembered (longer than any run can take).
KEEP_SECONDS = JOB_CLAIM_SECONDS
# A worker finding the job queue empty looks again within this many milliseconds (Dramatiq
# polls Redis; about 25 cheap fetches a second per idle worker, each a short Lua script).
IDLE_POLL_MS = 50
# Beyond this many waiting jobs new ones are refused with "busy" instead of queued.
MAX_QUEUED_JOBS = 10_000
# How long ``POST /api/enrich`` waits for a worker's answer.
REST_TIMEOUT_SECONDS = 300.0
# Errors that mean "Redis is not reachable right now" (restart, network): retry later.
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError, OSError, asyncio.TimeoutError)
# Dead letters are kept this long in Redis (their runs are recorded in the database).
# How many dead letters one read turns into runs at most (the rest on the next read).
DEAD_LETTER_BATCH = 200
DEAD_LETTER_KEEP_MS = 7 * 24 * 3600 * 1000


class QueueUnavailable(Exception):
    """Redis did not take the job within the submit patience."""


class WorkersUnavailable(DomainError):
    """The workers are busy, or their run was cut short: try again later."""

    status = 503


def queue_mode() -> bool:
    """Jobs travel through Dramatiq when workers are on and the layer is Redis-backed.

    With the in-memory layer (one process: tests, a single daphne) there is no Redis to
    hold a queue; ``enrichment_dispatch`` then hands the job over in process.
    """
    layers: dict[str, Any] = settings.CHANNEL_LAYERS
    backend = str(layers.get("default", {}).get("BACKEND", ""))
    redis_layers = ("channels_redis.", "common.channel_layer.")
    return workers_enabled() and backend.startswith(redis_layers)


def prefix() -> str:
    layers: dict[str, Any] = settings.CHANNEL_LAYERS
    config = layers.get("default", {}).get("CONFIG", {})
    return str(config.get("prefix") or "asgi")


@dataclass(frozen=True)
class Keys:
    prefix: str

    @property
    def namespace(self) -> str:
        """Dramatiq's namespace: its queue is ``<namespace>:enrichment``."""
        return f"{self.prefix}:dramatiq"

    @property
    def queue(self) -> str:
        return f"{self.namespace}:{QUEUE}"

    @property
    def messages(self) -> str:
        """Every message not yet acknowledged (waiting or running), by Redis message id."""
        return f"{self.queue}.msgs"

    @property
    def delayed(self) -> str:
        """Messages waiting for their retry (backoff)."""
        return f"{self.namespace}:{QUEUE}.DQ.msgs"

    @property
    def dead_letters(self) -> str:
        """Dramatiq's dead-letter queue: a sorted set of message ids (score = when)."""
        return f"{self.queue}.XQ"

    @property
    def dead_letter_messages(self) -> str:
        return f"{self.queue}.XQ.msgs"

    @property
    def workers(self) -> str:
        return f"{self.prefix}:enrichment:workers"

    def claim(self, job: str) -> str:
        return f"{self.prefix}:enrichment:claim:{job}"

    def final(self, job: str) -> str:
        return f"{self.prefix}:enrichment:final:{job}"


def keys() -> Keys:
    return Keys(prefix())


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, aioredis.Redis]] = (
    weakref.WeakKeyDictionary()
)


def client() -> aioredis.Redis:
    """One asyncio client per event loop (a client is bound to the loop that made it)."""
    per_url = _clients.setdefault(asyncio.get_running_loop(), {})
    url = str(settings.REDIS_URL)  # queue mode implies REDIS_URL
    if url not in per_url:
        per_url[url] = aioredis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)
    return per_url[url]


class JobBroker(RedisBroker):
    """Dramatiq's Redis broker, with its queue maintenance on the workers' heartbeat, and a
    worker that looks at an idle job queue often.

    Maintenance (the messages of workers whose heartbeat stopped go back on the queue,
    expired dead letters go) runs on a random share of commands by default; here it runs on
    every ``qsize``, which only the workers' heartbeat thread calls, once a beat.

    Dramatiq's Redis consumer polls: each time it finds the queue empty it sleeps twice as
    long as before, up to the worker's timeout (1 s). A message after a quiet spell waited
    for that sleep: with ``bench/ws_load.py --redis --pause 2`` a message took 207 ms (p50)
    against 23 ms in daphne. The job queue's consumer sleeps ``IDLE_POLL_MS`` at most; the
    retries' delay queue keeps Dramatiq's timeout (its messages wait seconds anyway).
    """

    def _should_do_maintenance(self, command: str) -> int:
        return int(command == "qsize") or super()._should_do_maintenance(command)

    def consume(self, queue_name: str, prefetch: int = 1, timeout: int = 5000) -> Any:
        if queue_name == QUEUE:
            timeout = min(timeout, IDLE_POLL_MS)
        return super().consume(queue_name, prefetch, timeout)


def broker_create(*, middleware: list[Any] | None = None) -> JobBroker:
    """A broker for this deployment's prefix: the submit side sends, workers consume."""
    names = keys()
    broker = JobBroker(
        url=str(settings.REDIS_URL),
        namespace=names.namespace,
        heartbeat_timeout=int(HEARTBEAT_TTL * 1000),
        dead_message_ttl=DEAD_LETTER_KEEP_MS,
        maintenance_chance=0,
        middleware=middleware if middleware is not None else [],
        socket_connect_timeout=2,
        socket_timeout=10,
        health_check_interval=30,
    )
    broker.declare_queue(QUEUE)
    return broker


# KEYS: the queue's list, its messages' hash. ARGV: the most jobs that may wait, the message's
# Redis id, the encoded message. Returns 0 (nothing written) when the queue is full.
#
# Dramatiq's own enqueue (its ``dispatch.lua``) writes the message into the hash and pushes
# its id onto the list; this does the same, with the "busy" check before it, in one round trip
# on the web process' event loop. Dramatiq's synchronous client took a thread hop, an LLEN and
# the enqueue: under ``bench/ws_load.py --redis`` the hop and the two round trips were about an
# eighth of daphne's busy samples (py-spy). Dramatiq's script also stamps the sender's id in its
# heartbeats set (each id gone quiet is scanned for unacknowledged messages); a web process
# holds no messages, so it is left out.
ENQUEUE_SCRIPT = """
if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[1]) then
    return 0
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('RPUSH', KEYS[1], ARGV[2])
return 1
"""


def job_message(job: dict[str, str]) -> Message[Any]:
    return Message(queue_name=QUEUE, actor_name=ACTOR, args=(job,), kwargs={}, options={})


async def _enqueue(job: dict[str, str]) -> None:
    """Queue ``job`` as Dramatiq's broker would, unless ``MAX_QUEUED_JOBS`` wait already."""
    names = keys()
    # Each delivery of a message has a Redis id of its own (Dramatiq's retries send it again).
    message = job_message(job).copy(options={"redis_message_id": str(uuid.uuid4())})
    connection = client()
    added = await connection.register_script(ENQUEUE_SCRIPT)(
        keys=[names.queue, names.messages],
        args=[MAX_QUEUED_JOBS, message.options["redis_message_id"], message.encode()],
        client=connection,
    )
    if not added:
        raise ChannelFull(names.queue)


async def job_submit(
    *,
    request: services.EnrichRequest,
    request_id: str,
    reply_channel: str,
    patience: float = 30.0,
) -> str:
    """Queue a job and return its id.

    Redis being restarted is ridden out for ``patience`` seconds (the frame waits in this
    process), then :class:`QueueUnavailable`; a queue past ``MAX_QUEUED_JOBS`` is
    ``ChannelFull`` ("busy"), as with the channel-layer transport.
    """
    job = uuid.uuid4().hex
    payload = {
        "job": job,
        "id": request_id,
        "reply_channel": reply_channel,
        "request": json.dumps(request.to_json()),
    }
    deadline = time.monotonic() + patience
    delay = 0.1
    while True:
        try:
            await _enqueue(payload)
            return job
        except REDIS_DOWN:
            if time.monotonic() + delay > deadline:
                raise QueueUnavailable from None
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)


async def finals_fetch(jobs: list[str]) -> dict[str, dict[str, Any]]:
    """The stored final frames of those of ``jobs`` that have finished."""
    if not jobs:
        return {}
    names = keys()
    values = await client().mget([names.final(job) for job in jobs])
    return {job: json.loads(value) for job, value in zip(jobs, values, strict=True) if value}


async def claims_fetch(jobs: list[str]) -> set[str]:
    """Those of ``jobs`` that a worker has claimed (started)."""
    if not jobs:
        return set()
    names = keys()
    values = await client().mget([names.claim(job) for job in jobs])
    return {job for job, value in zip(jobs, values, strict=True) if value}


async def live_worker_count() -> int:
    return int(await client().zcount(keys().workers, time.time() - HEARTBEAT_TTL, "+inf"))


@dataclass(frozen=True)
class QueueStatus:
    ok: bool
    workers: list[str]
    queued: int
    running: int
    detail: str | None = None
    retrying: int = 0
    dead_letters: int = 0


def queue_status() -> QueueStatus:
    """What ``/api/health`` shows: live workers, jobs waiting, running, retrying, dead."""
    names = keys()
    sync_client = redis.Redis.from_url(
        str(settings.REDIS_URL), socket_connect_timeout=2, socket_timeout=2
    )
    try:
        with sync_client.pipeline(transaction=False) as pipe:
            pipe.zrangebyscore(names.workers, time.time() - HEARTBEAT_TTL, "+inf")
            pipe.llen(names.queue)
            pipe.hlen(names.messages)
            pipe.hlen(names.delayed)
            pipe.zcard(names.dead_letters)
            workers, queued, unacknowledged, retrying, dead = pipe.execute()
    except (redis.RedisError, OSError) as exc:
        return QueueStatus(ok=False, workers=[], queued=0, running=0, detail=str(exc)[:200])
    finally:
        sync_client.close()
    live = sorted(worker.decode() for worker in workers)
    return QueueStatus(
        ok=bool(live),
        workers=live,
        queued=int(queued),
        # Unacknowledged messages are waiting or being run (a message fetched into a
        # worker's prefetch counts as running: it is that worker's to answer).
        running=max(int(unacknowledged) - int(queued), 0),
        retrying=int(retrying),
        dead_letters=int(dead),
        detail=None if live else "no enrichment worker is alive (runworker enrichment)",
    )


def dead_letter_error(options: dict[str, Any]) -> str:
    """Why the queue gave a job up: its attempts and the last line of its traceback."""
    lines = [line for line in str(options.get("traceback") or "").splitlines() if line.strip()]
    reason = lines[-1].strip()[:500] if lines else "the job failed"
    attempts = max(int(options.get("retries", 0) or 0), 1)  # each failed attempt counts
    return f"dead-letter: the job queue gave up after {attempts} attempt(s): {reason}"


def dead_letters_mark() -> tuple[int, float | None]:
    """How many dead letters the queue holds and the newest one's time: while neither
    changes, no job was given up since (Dramatiq's ``XQ`` only grows by new letters)."""
    names = keys()
    sync_client = redis.Redis.from_url(
        str(settings.REDIS_URL), socket_connect_timeout=2, socket_timeout=5
    )
    try:
        with sync_client.pipeline(transaction=False) as pipe:
            pipe.zcard(names.dead_letters)
            pipe.zrevrange(names.dead_letters, 0, 0, withscores=True)
            count, newest = pipe.execute()
    finally:
        sync_client.close()
    return int(count), (float(newest[0][1]) if newest else None)


def dead_letters_read(limit: int = DEAD_LETTER_BATCH) -> list[DeadLetter]:
    """The newest dead letters of the queue (Dramatiq's ``XQ``), as jobs to record."""
    names = keys()
    sync_client = redis.Redis.from_url(
        str(settings.REDIS_URL), socket_connect_timeout=2, socket_timeout=5
    )
    try:
        ids = cast(
            list[tuple[bytes, float]],
            sync_client.zrevrange(names.dead_letters, 0, limit - 1, withscores=True),
        )
        bodies = (
            cast(
                list[bytes | None],
                sync_client.hmget(names.dead_letter_messages, [i for i, _ in ids]),
            )
            if ids
            else []
        )
    finally:
        sync_client.close()
    letters = []
    for (_, score), body in zip(ids, bodies, strict=True):
        if body is None:
            continue
        message = Message.decode(body)
        job = dict(message.args[0]) if message.args and isinstance(message.args[0], dict) else {}
        try:
            request = services.EnrichRequest.from_json(json.loads(job["request"]))
        except (KeyError, TypeError, ValueError):
            continue  # not one of our jobs: nothing to record
        letters.append(
            DeadLetter(
                job=str(job["job"]),
                request=request,
                error=dead_letter_error(message.options),
                failed_at=datetime.fromtimestamp(score / 1000, tz=UTC),
            )
        )
    return letters


async def enrichment_answer(
    *, request: services.EnrichRequest, timeout: float = REST_TIMEOUT_SECONDS
) -> dict[str, Any]:
    """``POST /api/enrich``: through the job queue when a worker is alive, else here.

    Through the queue the request gets the sockets' guarantee (one run, one answer, also
    when its worker dies). With no live worker, or Redis unreachable, it runs in this
    process as without Redis, rather than keeping the HTTP client waiting for a worker.
    """
    if queue_mode():
        try:
            workers = await live_worker_count()
        except REDIS_DOWN:
            workers = 0
        if workers:
            return await _through_workers(request, timeout)
    return await services.enrichment_run(request=request)


async def _through_workers(request: services.EnrichRequest, timeout: float) -> dict[str, Any]:
    # Progress frames go to a channel nobody reads (they expire); the answer is the final.
    reply_channel = await get_channel_layer().new_channel("rest.")
    try:
        job = await job_submit(request=request, request_id="rest", reply_channel=reply_channel)
    except ChannelFull:
        raise WorkersUnavailable("the enrichment workers are busy; try again") from None
    except QueueUnavailable:
        return await services.enrichment_run(request=request)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            frame = (await finals_fetch([job])).get(job)
        except REDIS_DOWN:
            frame = None
        if frame is not None:
            if frame["type"] == "result":
                return {key: frame[key] for key in ("runId", "body", "links", "media")}
            if frame["error"].startswith(("interrupted", "dead-letter")):
                # Cut short, or given up after its retries: the service, not the request.
                raise WorkersUnavailable(frame["error"])
            raise DomainError(frame["error"])
        await asyncio.sleep(0.2)
    raise WorkersUnavailable(
        f"no answer from the enrichment workers within {timeout:.0f} s (job {job} stays queued)"
    )
