"""``GET /api/health``: is the database answering, is the channel layer delivering."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection
from django.http import HttpRequest
from django.utils import timezone
from ninja import Router, Schema, Status

from accounts.auth import BearerToken

router = Router(tags=["system"])
LAYER_TIMEOUT_SECONDS = 2.0


class BackendStatus(Schema):
    ok: bool
    backend: str
    detail: str | None = None
    latencyMs: float | None = None


class WorkersStatus(Schema):
    ok: bool
    live: list[str]
    queued: int
    running: int
    # Jobs waiting for a retry (backoff), and jobs the queue gave up on (kept 7 days; each is
    # also a ``dead-letter`` run in the history).
    retrying: int = 0
    deadLetters: int = 0
    detail: str | None = None


class JobsStatus(Schema):
    """Enrichment jobs that did not end well in time: still ``running`` past the job deadline
    (``overdue``), closed by the sweeper within the last deadline (``lost``), or given up by
    the job queue within the last deadline (``givenUp``: dead letters)."""

    ok: bool
    deadlineSeconds: int
    overdue: int
    lost: int
    givenUp: int = 0
    detail: str | None = None


class RetentionOut(Schema):
    """The decision log's retention (README "Retention"). ``nextPruneAt``: when the next
    kept run falls due for removal (in the past: a prune pass is due); null when nothing
    ever is. ``overdue``: due for over a day, so ``prune_runs`` is not running."""

    policy: str
    oldestRunAt: datetime | None
    nextPruneAt: datetime | None
    overdue: bool
    lastPruneAt: datetime | None
    lastPruneRemoved: int | None
    lastPruneRedacted: int | None
    lastPruneError: str | None
    # Partitioned storage (PostgreSQL, ``manage.py partition_runs``): runs created from
    # ``partitionsUntil`` on have no partition; ``partitionsRunningOut`` (within a week:
    # prune passes are not creating the months ahead) turns the status ``degraded``.
    partitioned: bool = False
    partitionsUntil: datetime | None = None
    partitionsRunningOut: bool = False


class HealthOut(Schema):
    status: str
    database: BackendStatus
    channelLayer: BackendStatus
    workers: WorkersStatus | None = None
    jobs: JobsStatus | None = None
    retention: RetentionOut | None = None


class PublicHealthOut(Schema):
    """What an anonymous caller sees: a load balancer needs the verdict, not the error
    text of the database driver (host names, ports, user names)."""

    status: str


def database_status() -> BackendStatus:
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "down"; report it, never raise
        return BackendStatus(ok=False, backend=connection.vendor, detail=str(exc)[:200])
    return BackendStatus(
        ok=True,
        backend=connection.vendor,
        latencyMs=round((time.perf_counter() - started) * 1000, 2),
    )


async def _layer_round_trip() -> None:
    layer = get_channel_layer()
    channel = await layer.new_channel("health.")
    await layer.send(channel, {"type": "health.ping"})
    await asyncio.wait_for(layer.receive(channel), timeout=LAYER_TIMEOUT_SECONDS)


def channel_layer_status() -> BackendStatus:
    layer = get_channel_layer()
    backend = type(layer).__name__ if layer is not None else "none"
    if layer is None:
        return BackendStatus(ok=False, backend=backend, detail="no channel layer configured")
    started = time.perf_counter()
    try:
        async_to_sync(_layer_round_trip)()
    except Exception as exc:  # a down Redis raises connection errors of several kinds
        return BackendStatus(ok=False, backend=backend, detail=str(exc)[:200])
    return BackendStatus(
        ok=True, backend=backend, latencyMs=round((time.perf_counter() - started) * 1000, 2)
    )


def _authenticated(request: HttpRequest) -> bool:
    if request.user.is_authenticated:
        return True
    return BearerToken()(request) is not None


@router.get(
    "/health",
    auth=None,
    response={200: HealthOut | PublicHealthOut, 503: HealthOut | PublicHealthOut},
)
def health(request: HttpRequest) -> Status[HealthOut | PublicHealthOut]:
    """``{status}`` for anyone; logged-in callers (session or token) also get each backend.
    ``degraded`` names any fault; the HTTP status is 503 only when this process cannot serve
    (database or channel layer down), for a load balancer's check."""
    database = database_status()
    layer = channel_layer_status()
    workers = workers_status()
    jobs = jobs_status() if database.ok else None
    # 503 only when this process cannot serve (its database or channel layer is down): a load
    # balancer then sends its requests elsewhere. Workers missing or jobs overdue degrade the
    # service as a whole, not this process, and another instance would answer the same: 200.
    serving = database.ok and layer.ok
    retention = retention_status() if database.ok else None
    healthy = (
        serving
        and (workers is None or workers.ok)
        and (jobs is None or jobs.ok)
        and (retention is None or not retention.partitionsRunningOut)
    )
    status = "ok" if healthy else "degraded"
    body: HealthOut | PublicHealthOut = (
        HealthOut(
            status=status,
            database=database,
            channelLayer=layer,
            workers=workers,
            jobs=jobs,
            retention=retention,
        )
        if _authenticated(request)
        else PublicHealthOut(status=status)
    )
    return Status(200 if serving else 503, body)


def workers_status() -> WorkersStatus | None:
    """Live workers (heartbeats) and queue depth; None when jobs run in this process."""
    from enrichment.jobs import queue as jobqueue

    if not jobqueue.queue_mode():
        return None
    status = jobqueue.queue_status()
    return WorkersStatus(
        ok=status.ok,
        live=status.workers,
        queued=status.queued,
        running=status.running,
        retrying=status.retrying,
        deadLetters=status.dead_letters,
        detail=status.detail,
    )


def jobs_status() -> JobsStatus:
    """Overdue and lost jobs (the deadline of ``ENRICHMENT_JOB_DEADLINE_SECONDS``)."""
    from django.conf import settings

    from enrichment.services.interrupted import (
        dead_letter_runs_count,
        lost_runs_count,
        overdue_runs_count,
    )

    deadline = int(settings.ENRICHMENT_JOB_DEADLINE_SECONDS)
    overdue = overdue_runs_count(deadline)
    lost = lost_runs_count(deadline)
    given_up = dead_letter_runs_count(deadline)
    reasons = []
    if overdue:
        reasons.append(f"{overdue} run(s) still running past the {deadline} s job deadline")
    if lost:
        reasons.append(
            f"{lost} run(s) closed as overdue in the last {deadline} s (worker or queue lost them)"
        )
    if given_up:
        reasons.append(
            f"{given_up} job(s) given up by the job queue in the last {deadline} s "
            "(dead letters: history ?outcome=dead-letter)"
        )
    return JobsStatus(
        ok=not reasons,
        deadlineSeconds=deadline,
        overdue=overdue,
        lost=lost,
        givenUp=given_up,
        detail="; ".join(reasons) or None,
    )


def retention_status() -> RetentionOut | None:
    """Informational (an overdue prune is not an outage), except partitions running out:
    runs could soon not be stored at all."""
    from enrichment.selectors.retention import retention_status as read_status
    from enrichment.services.partitions import partition_status

    try:
        status = read_status()
        storage = partition_status()
    except Exception:  # a health check reports, never raises; the database part says why
        return None
    last = status.last_pass
    return RetentionOut(
        policy=status.policy,
        oldestRunAt=status.oldest_run_at,
        nextPruneAt=status.next_due_at,
        overdue=status.overdue,
        lastPruneAt=last.started_at if last else None,
        lastPruneRemoved=last.removed if last else None,
        lastPruneRedacted=last.redacted if last else None,
        lastPruneError=(last.error or None) if last else None,
        partitioned=storage.partitioned,
        partitionsUntil=storage.until,
        partitionsRunningOut=storage.running_out(timezone.now()),
    )


class MeOut(Schema):
    username: str
    isStaff: bool


@router.get("/me", response=MeOut)
def me(request: HttpRequest) -> MeOut:
    """Who the request is authenticated as (session or bearer token)."""
    return MeOut(username=request.user.get_username(), isStaff=request.user.is_staff)
