"""The durable enrichment job queue: a Redis Stream read by a consumer group.

With ``REDIS_URL`` every job of ``/ws/enrich/`` is one entry of the stream
``<prefix>:enrichment:jobs``; ``manage.py runworker enrichment`` processes read it with
XREADGROUP, so an entry stays *pending* (owned by one worker) until that worker XACKs it,
and a worker that dies leaves its entries pending for another worker to take over with
XAUTOCLAIM (``enrichment.jobs.stream_worker``). Delivery is at least once; the effect is once:

- ``<prefix>:enrichment:claim:<job>`` (SET NX) names the worker that runs a job, so a
  redelivered entry whose claimant is alive is left alone;
- every run row carries its job id (``Run.job``), so a takeover knows whether the dead
  worker had started the run (then it is closed as ``interrupted`` and answered with an
  error frame) or not (then it runs now);
- the final ``result``/``error`` frame is stored under ``<prefix>:enrichment:final:<job>``
  *before* the entry is acknowledged, and the socket's consumer polls for it, so a frame
  lost on the channel layer (Redis restarted mid-send) still reaches the client.

Workers add themselves to the sorted set ``<prefix>:enrichment:workers`` (score = time of
their last heartbeat); ``/api/health`` reads it together with the stream length.

Every key and the stream itself start with the channel layer's prefix, so deployments (and
test runs) sharing one Redis never see each other's jobs.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
import weakref
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import redis
import redis.asyncio as aioredis
from channels.exceptions import ChannelFull
from channels.layers import get_channel_layer
from django.conf import settings

from common.errors import DomainError
from enrichment.jobs.dispatch import JOB_CLAIM_SECONDS, workers_enabled
from enrichment.services import runs as services

GROUP = "enrichment-workers"
# A worker beats this often; one silent for HEARTBEAT_TTL seconds counts as gone.
HEARTBEAT_SECONDS = 1.0
HEARTBEAT_TTL = 5.0
# How long finals and claims are remembered (longer than any run can take).
KEEP_SECONDS = JOB_CLAIM_SECONDS
# Beyond this many unfinished jobs new ones are refused with "busy" instead of queued.
MAX_QUEUED_JOBS = 10_000
# How long ``POST /api/enrich`` waits for a worker's answer.
REST_TIMEOUT_SECONDS = 300.0
# Errors that mean "Redis is not reachable right now" (restart, network): retry later.
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError, OSError, asyncio.TimeoutError)


class QueueUnavailable(Exception):
    """Redis did not take the job within the submit patience."""


class WorkersUnavailable(DomainError):
    """The workers are busy, or their run was cut short: try again later."""

    status = 503


def stream_mode() -> bool:
    """Jobs travel through the stream when workers are on and the layer is Redis-backed.

    With the in-memory layer (one process: tests, a single daphne) there is no Redis to
    hold a stream; ``enrichment_dispatch`` then hands the job over in process.
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
    def stream(self) -> str:
        return f"{self.prefix}:enrichment:jobs"

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
    url = str(settings.REDIS_URL)  # stream mode implies REDIS_URL
    if url not in per_url:
        per_url[url] = aioredis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)
    return per_url[url]


# KEYS[1] the stream; ARGV[1] the most entries it may hold, then the job's field/value pairs.
# The length check and the append in one round trip (and atomic: no overshoot under load).
SUBMIT_SCRIPT = """
if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[1]) then
    return false
end
return redis.call('XADD', KEYS[1], '*', unpack(ARGV, 2))
"""


@cache
def _submit_script(redis_client: aioredis.Redis) -> Any:
    """The submit script of a client (EVALSHA, loaded again by redis-py when the server lost
    it); one client per Redis URL (``client``), so one script each."""
    return redis_client.register_script(SUBMIT_SCRIPT)


async def job_submit(
    *,
    request: services.EnrichRequest,
    request_id: str,
    reply_channel: str,
    patience: float = 30.0,
) -> str:
    """Append a job to the stream and return its id.

    Redis being restarted is ridden out for ``patience`` seconds (the frame waits in this
    process), then :class:`QueueUnavailable`; a queue past ``MAX_QUEUED_JOBS`` is
    ``ChannelFull`` ("busy"), as with the channel-layer transport.
    """
    job = uuid.uuid4().hex
    fields = {
        "job": job,
        "id": request_id,
        "reply_channel": reply_channel,
        "request": json.dumps(request.to_json()),
    }
    names = keys()
    arguments = [MAX_QUEUED_JOBS, *(item for pair in fields.items() for item in pair)]
    deadline = time.monotonic() + patience
    delay = 0.1
    while True:
        try:
            redis_client = client()
            if not await _submit_script(redis_client)(
                keys=[names.stream], args=arguments, client=redis_client
            ):
                raise ChannelFull(names.stream)
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


def queue_status() -> QueueStatus:
    """What ``/api/health`` shows: live workers, entries waiting and entries being run."""
    names = keys()
    sync_client = redis.Redis.from_url(
        str(settings.REDIS_URL), socket_connect_timeout=2, socket_timeout=2
    )
    try:
        # redis-py types its sync answers as Awaitable | Any; they are plain values here.
        workers = cast(
            list[bytes],
            sync_client.zrangebyscore(names.workers, time.time() - HEARTBEAT_TTL, "+inf"),
        )
        length = int(cast(int, sync_client.xlen(names.stream)))
        try:
            group = next(
                g
                for g in cast(list[dict[str, Any]], sync_client.xinfo_groups(names.stream))
                if g["name"] == GROUP.encode()
            )
            running, lag = int(group["pending"]), group.get("lag")
        except (redis.ResponseError, StopIteration):  # no group yet: no worker ever started
            running, lag = 0, None
        queued = int(lag) if lag is not None else max(length - running, 0)
    except (redis.RedisError, OSError) as exc:
        return QueueStatus(ok=False, workers=[], queued=0, running=0, detail=str(exc)[:200])
    finally:
        sync_client.close()
    live = sorted(worker.decode() for worker in workers)
    return QueueStatus(
        ok=bool(live),
        workers=live,
        queued=queued,
        running=running,
        detail=None if live else "no enrichment worker is alive (runworker enrichment)",
    )


async def enrichment_answer(
    *, request: services.EnrichRequest, timeout: float = REST_TIMEOUT_SECONDS
) -> dict[str, Any]:
    """``POST /api/enrich``: through the job stream when a worker is alive, else here.

    Through the stream the request gets the sockets' guarantee (one run, one answer, also
    when its worker dies). With no live worker, or Redis unreachable, it runs in this
    process as without Redis, rather than keeping the HTTP client waiting for a worker.
    """
    if stream_mode():
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
            if frame["error"].startswith("interrupted"):
                raise WorkersUnavailable(frame["error"])
            raise DomainError(frame["error"])
        await asyncio.sleep(0.2)
    raise WorkersUnavailable(
        f"no answer from the enrichment workers within {timeout:.0f} s (job {job} stays queued)"
    )
