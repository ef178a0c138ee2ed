"""Every job ends: a queued job with no final frame by the deadline gets an ``error`` frame,
also when Redis lost the job (no final will ever be stored) or stays unreachable, and is
recorded as a ``dead-letter`` run unless a worker started it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest

from enrichment import consumers
from enrichment.consumers import QueuedJobs, deadline_error
from enrichment.jobs import queue as jobqueue
from enrichment.models import Run
from enrichment.services.runs import EnrichRequest


class Socket:
    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    async def enrich_frame(self, event: dict[str, Any]) -> None:
        self.frames.append(event["frame"])

    async def send_json(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)


@pytest.mark.django_db(transaction=True)
def test_a_job_past_the_deadline_is_answered_with_an_error_naming_why_and_recorded(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.ENRICHMENT_JOB_DEADLINE_SECONDS = 5

    async def redis_down(jobs: list[str]) -> dict[str, Any]:
        raise ConnectionError("redis restarted")

    monkeypatch.setattr(jobqueue, "finals_fetch", redis_down)

    async def scenario() -> tuple[Socket, Socket, QueuedJobs]:
        queued = QueuedJobs()
        late, fresh = Socket(), Socket()
        lost = EnrichRequest(body="lost with redis", channel="telegram", session_key="s-9")
        queued.add("lost-job", late, "m1", lost)  # type: ignore[arg-type]
        queued.add("new-job", fresh, "m2", EnrichRequest(body="new"))  # type: ignore[arg-type]
        queued.add("started-job", late, "m3", EnrichRequest(body="started"))  # type: ignore[arg-type]
        queued.task.cancel()  # type: ignore[union-attr]  # polled by hand below
        past = time.monotonic() - 6
        queued.jobs["lost-job"] = consumers._Queued(late, "m1", lost, past)  # type: ignore[arg-type]
        queued.jobs["started-job"] = consumers._Queued(late, "m3", lost, past)  # type: ignore[arg-type]
        # Redis is down: the overdue job is answered before Redis is asked.
        with contextlib.suppress(ConnectionError):
            await queued.poll()
        return late, fresh, queued

    started = Run.objects.create(original_body="started", outcome="running", job="started-job")
    late, fresh, queued = asyncio.run(scenario())
    assert late.frames == [
        {"type": "error", "id": "m1", "error": deadline_error(5, "lost-job")},
        {"type": "error", "id": "m3", "error": deadline_error(5, "started-job")},
    ]
    assert late.frames[0]["error"].startswith("deadline: no answer within 5 s (job lost-job)")
    assert fresh.frames == []
    assert list(queued.jobs) == ["new-job"]  # still waiting for its answer
    # The lost job is in the decision log; the one a worker started keeps its own run.
    recorded = Run.objects.get(job="lost-job")
    assert recorded.outcome == "dead-letter" and recorded.error == deadline_error(5, "lost-job")
    assert (recorded.original_body, recorded.channel) == ("lost with redis", "telegram")
    assert list(Run.objects.filter(job="started-job")) == [started]
