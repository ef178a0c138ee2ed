"""Enrichment runs: run the stages for one message, record the decision, broadcast it."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import models, transaction
from django.utils import timezone
from opentelemetry import trace

from common import metrics, tracing
from common.batching import Gathered, together_or_alone
from common.connections import close_stale_connections
from common.errors import DomainError, ServiceUnavailable
from common.logs import log_context
from common.storable import storable_text
from enrichment import resolver
from enrichment.config.cache import config_in_force
from enrichment.models import Attempt, Run, UrlDecision
from enrichment.pipeline.config.model import Config
from enrichment.pipeline.links.derived import derived_status
from enrichment.pipeline.stages import HeldProgress, StagesResult, run_stages
from enrichment.pipeline.templates import MessageContext
from enrichment.services import links, media
from enrichment.services.alerts import alerts_check_soon
from enrichment.services.live_feed import decision_broadcast
from enrichment.services.problems import Occurrence, occurrence_from_rows, problems_record
from enrichment.services.run_rows import rows_insert, run_update
from enrichment.stage_specs import StageEnv, stage_json, stages_build, stages_store

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class EnrichRequest:
    """One inbound message to enrich (the fields of ``POST /api/enrich``)."""

    body: str
    channel: str | None = None
    chat_type: str | None = None
    session_key: str | None = None
    agent_id: str | None = None
    message_id: str | None = None
    provider: str | None = None
    surface: str | None = None
    sender_name: str | None = None
    attachments: tuple[Mapping[str, Any], ...] = field(default=())

    def context(self) -> MessageContext:
        return MessageContext(
            body=self.body,
            channel=self.channel,
            chat_type=self.chat_type,
            session_key=self.session_key,
            provider=self.provider,
            surface=self.surface,
            sender_name=self.sender_name,
            message_sid=self.message_id,
            agent_id=self.agent_id,
        )

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__} | {
            "attachments": [dict(item) for item in self.attachments]
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EnrichRequest:
        return cls(**{**data, "attachments": tuple(data.get("attachments") or ())})


def request_from_schema(payload: Any) -> EnrichRequest:
    return EnrichRequest(
        body=payload.body,
        channel=payload.channel,
        chat_type=payload.chatType,
        session_key=payload.sessionKey,
        agent_id=payload.agentId,
        message_id=payload.messageId,
        provider=payload.provider,
        surface=payload.surface,
        sender_name=payload.senderName,
        attachments=tuple(item.model_dump(exclude_none=True) for item in payload.attachments),
    )


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class Start:
    """A message about to be enriched, whose run is created ``running`` first."""

    request: EnrichRequest
    # The queue job running it (``enrichment.jobs.worker``), in the same INSERT, so "did this
    # job start a run?" has an answer after any crash.
    job: str = ""
    # The OpenTelemetry trace the run is recorded in ("" with tracing off), shown on its page.
    trace_id: str = ""


def runs_start(starts: Sequence[Start]) -> list[tuple[Config, Run]]:
    """The config in force and a new ``running`` run recording it for each message, in one
    INSERT (one thread hop, and one query to check the config's version when it has not
    changed). Stale database connections are dropped first, as Channels does before a socket
    event."""
    close_stale_connections()
    loaded = config_in_force()
    runs = [
        Run(
            message_id=start.request.message_id or "",
            channel=start.request.surface or start.request.provider or start.request.channel or "",
            chat_type=start.request.chat_type or "",
            session_key=start.request.session_key or "",
            agent_id=start.request.agent_id or "",
            original_body=storable_text(start.request.body),
            # Only serialized by the save, never changed, so the shared document will do.
            config_snapshot=loaded.document,
            config_version=loaded.version,
            owner=_owner(),
            job=start.job,
            trace_id=start.trace_id,
        )
        for start in starts
    ]
    rows_insert(runs)
    return [(loaded.config, run) for run in runs]


def runs_start_gathered(starts: Sequence[Start]) -> list[tuple[Config, Run] | Exception]:
    """The runs that start together (``Gathered``): one INSERT for all of them; when it
    fails, each alone, so only a message the database refuses fails."""
    return together_or_alone(starts, runs_start, lambda start: runs_start([start])[0])


@dataclass(frozen=True)
class Finish:
    """A run whose stages are done, to store."""

    run: Run
    result: StagesResult
    duration_ms: int


FINISH_FIELDS = (
    "enriched_body",
    "duration_ms",
    "finished_at",
    "attempts_failed",
    "fallback_used",
    "dns_failed",
)


def runs_finish(finishes: Sequence[Finish]) -> None:
    """Store the new bodies and every stage's record (rows included) of these runs in one
    transaction: the new rows of each model in one INSERT for all the runs, then each run's
    UPDATE."""
    rows: dict[type[models.Model], list[models.Model]] = {}
    updates = []
    recorded = []
    for finish in finishes:
        run = finish.run
        run.enriched_body = storable_text(finish.result.body)
        run.duration_ms = finish.duration_ms
        run.finished_at = timezone.now()
        writes = stages_store(run, finish.result.records)
        for row in writes.rows:  # in order: a row only points at rows of models before it
            rows.setdefault(type(row), []).append(row)
        status = derived_status(
            [(row.command, row.outcome) for row in writes.rows if isinstance(row, Attempt)],
            [row.reason for row in writes.rows if isinstance(row, UrlDecision) and row.blocked],
        )
        run.attempts_failed = status.attempts_failed
        run.fallback_used = status.fallback_used
        run.dns_failed = status.dns_failed
        updates.append((run, [*FINISH_FIELDS, *writes.fields]))
        recorded.append((run, writes.rows))
    with transaction.atomic():
        for new_rows in rows.values():
            rows_insert(new_rows)
        for run, fields in updates:
            run_update(run, fields)
    runs_recorded([occurrence_from_rows(run, run_rows) for run, run_rows in recorded])


def runs_recorded(occurrences: Sequence[Occurrence]) -> None:
    """After runs are stored: their failures counted into problems, then the alert rules
    checked soon (in the background, throttled). Runs without a failure cost nothing here.
    Neither step may undo or fail the stored runs: an error is logged, and
    ``manage.py rebuild_problems`` recounts from the stored runs."""
    if not any(occurrence.failures for occurrence in occurrences):
        return
    try:
        problems_record(occurrences)
        alerts_check_soon()
    except Exception:
        ids = [occurrence.run_id for occurrence in occurrences]
        logger.exception("runs %s: grouping their failures into problems failed", ids)


def run_finish(*, run: Run, result: StagesResult, duration_ms: int) -> Run:
    """Store one run's new body and every stage's record in one transaction."""
    runs_finish([Finish(run, result, duration_ms)])
    return run


def run_finish_or_fail(*, run: Run, result: StagesResult, duration_ms: int) -> Run:
    """``run_finish``; when that raises anyway (the database refused a value or went away),
    the run is still closed as an error instead of staying ``running`` until the stale-run
    sweep, and the caller gets a 503-class error naming the run."""
    try:
        return run_finish(run=run, result=result, duration_ms=duration_ms)
    except Exception as exc:
        logger.exception("run %s: storing the result failed", run.pk)
        try:
            run_fail(
                run=run, error=f"the result could not be stored: {exc!r}", duration_ms=duration_ms
            )
        except Exception:  # the database is gone: the stale-run sweep closes it later
            logger.exception("run %s: marking it failed failed too", run.pk)
        raise ServiceUnavailable(
            f"enrichment ran but its result could not be stored (run {run.pk}); see the server log"
        ) from exc


def runs_finish_gathered(finishes: Sequence[Finish]) -> list[Run | Exception]:
    """The runs that finished together (``Gathered``): one transaction for all of them;
    when it fails, each run alone (``run_finish_or_fail``), so only a run the database
    refuses fails, and it fails as it would have alone."""

    def together(batch: Sequence[Finish]) -> list[Run]:
        runs_finish(batch)
        return [finish.run for finish in batch]

    def alone(finish: Finish) -> Run:
        return run_finish_or_fail(
            run=finish.run, result=finish.result, duration_ms=finish.duration_ms
        )

    return together_or_alone(finishes, together, alone)


# Runs of this process that start (finish) while others are being written are written
# together; while that happens, one batch per 20 ms at most, so more runs join each.
GATHER_SPACING_SECONDS = 0.02
# A message cancelled (its socket closed) before its run is written starts no run.
_start_gathered = Gathered(
    runs_start_gathered, most=64, spacing=GATHER_SPACING_SECONDS, drop_cancelled=True
)
_finish_gathered = Gathered(runs_finish_gathered, most=64, spacing=GATHER_SPACING_SECONDS)


def run_fail(*, run: Run, error: str, duration_ms: int, outcome: str = Run.Outcome.ERROR) -> None:
    run.outcome = outcome
    run.error = storable_text(error[:2000])
    run.duration_ms = duration_ms
    run.finished_at = timezone.now()
    run_update(run, ["outcome", "error", "duration_ms", "finished_at"])
    runs_recorded([occurrence_from_rows(run, ())])


async def enrichment_run(
    *, request: EnrichRequest, on_progress: ProgressCallback | None = None, job: str = ""
) -> dict[str, Any]:
    """Enrich one message with the stored config; record and broadcast the run.

    Returns the API result ``{runId, body, links, media}``: the stages of ``STAGES`` run in
    order (media, then links, which reads the body media rewrote, so a URL spoken in a voice
    note gets enriched too), each record under its stage's name.

    With tracing on, the run is one ``enrichment.run`` span (a child of the HTTP request's
    when there is one) holding a span per stage, URL and attempt; its trace id is stored on
    the run.
    """
    if not tracing.recording():
        return await _enrichment_run(request=request, on_progress=on_progress, job=job, trace_id="")
    attributes = {
        "channel": request.channel or "",
        "chat_type": request.chat_type or "",
        "agent_id": request.agent_id or "",
        "job": job,
    }
    with tracing.tracer().start_as_current_span("enrichment.run", attributes=attributes) as span:
        result = await _enrichment_run(
            request=request, on_progress=on_progress, job=job, trace_id=tracing.trace_id_of(span)
        )
        span.set_attribute("run.id", result["runId"])
        return result


async def _enrichment_run(
    *, request: EnrichRequest, on_progress: ProgressCallback | None, job: str, trace_id: str
) -> dict[str, Any]:
    config, run = await _start_gathered(Start(request, job, trace_id))
    # Every line logged while the run works says which run, session and job it is about.
    with log_context(run_id=run.pk, session_key=run.session_key, job_id=job):
        return await _stages_run(request=request, on_progress=on_progress, config=config, run=run)


async def _stages_run(
    *, request: EnrichRequest, on_progress: ProgressCallback | None, config: Config, run: Run
) -> dict[str, Any]:
    started = time.monotonic()
    runner = partial(links.run_cli, config)

    def resolve(host: str) -> list[str]:
        return resolver.resolve_host(host)  # looked up at each call: tests answer made-up names

    env = StageEnv(
        config=config,
        agent_id=request.agent_id,
        attachments=request.attachments,
        runner=runner,
        resolve=resolve,
        link_runner=links.link_runner(
            settings=config.web_fetch, subprocess=runner, resolve=resolve
        ),
        media_run=media.media_run,
    )
    progress = None if on_progress is None else HeldProgress(on_progress, after=_progress_after())
    try:
        try:
            result = await run_stages(
                stages_build(env), request.context(), progress, span=tracing.open_span
            )
        finally:
            if progress is not None:
                await progress.close()  # nothing held is sent once the run is over
    except asyncio.CancelledError:
        # The socket closed (or the worker is stopping): close the run instead of leaving
        # it "running" until the stale-run sweep, then let the cancellation go on.
        await sync_to_async(run_fail)(
            run=run,
            error="cancelled before it finished (the client disconnected or the server stopped)",
            duration_ms=_elapsed_ms(started),
            outcome=Run.Outcome.INTERRUPTED,
        )
        _observe(run, {})
        # Dashboards show it too (a run that vanished from the live views would look lost).
        await asyncio.shield(decision_broadcast(run))
        raise
    except Exception as exc:
        logger.exception("enrichment run %s failed", run.pk)
        await sync_to_async(run_fail)(run=run, error=repr(exc), duration_ms=_elapsed_ms(started))
        _observe(run, {})
        await decision_broadcast(run)
        raise DomainError(f"enrichment failed: {exc}") from exc
    records = stage_json(result.records)
    try:
        await _finish_gathered(Finish(run, result, _elapsed_ms(started)))
    except Exception:
        _observe(run, records)  # closed as an error by run_finish_or_fail, when it could
        raise
    _observe(run, records)
    trace.get_current_span().set_attribute("run.outcome", run.outcome)
    await decision_broadcast(run)
    return {"runId": run.pk, "body": result.body, **records}


def _observe(run: Run, records: Mapping[str, Any]) -> None:
    """``/metrics``: the run by outcome and channel, and its attempts' times."""
    metrics.run_observe(
        outcome=run.outcome, channel=run.channel, duration_ms=run.duration_ms, records=records
    )


def _progress_after() -> float:
    """Seconds a run lasts before its progress frames go out (``PROGRESS_AFTER_MS``)."""
    return settings.PROGRESS_AFTER_MS / 1000


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


async def enrichment_frame(
    *,
    request: EnrichRequest,
    request_id: str,
    on_progress: ProgressCallback | None,
    job: str = "",
) -> dict[str, Any]:
    """The WebSocket answer for one request: a ``result`` frame, or an ``error`` frame."""
    try:
        result = await enrichment_run(request=request, on_progress=on_progress, job=job)
    except DomainError as exc:
        return {"type": "error", "id": request_id, "error": exc.detail}
    except Exception:
        # A socket must always get an answer; the cause goes to the log, not to the client.
        logger.exception("enrichment request %s failed", request_id)
        return {
            "type": "error",
            "id": request_id,
            "error": "enrichment failed: internal error (logged)",
        }
    return {"type": "result", "id": request_id, **result}
