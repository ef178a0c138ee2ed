"""Every job ends: a queued job with no final frame by the deadline gets an ``error`` frame,
also when Redis lost the job (no final will ever be stored) or stays unreachable."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest

from enrichment import consumers
from enrichment.consumers import QueuedJobs, deadline_error
from enrichment.jobs import queue as jobqueue


class Socket:
    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    async def enrich_frame(self, event: dict[str, Any]) -> None:
        self.frames.append(event["frame"])

    async def send_json(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)


def test_a_job_past_the_deadline_is_answered_with_an_error_naming_why(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.ENRICHMENT_JOB_DEADLINE_SECONDS = 5

    async def redis_down(jobs: list[str]) -> dict[str, Any]:
        raise ConnectionError("redis restarted")

    monkeypatch.setattr(jobqueue, "finals_fetch", redis_down)

    async def scenario() -> tuple[Socket, Socket, QueuedJobs]:
        queued = QueuedJobs()
        late, fresh = Socket(), Socket()
        queued.add("lost-job", late, "m1")  # type: ignore[arg-type]
        queued.add("new-job", fresh, "m2")  # type: ignore[arg-type]
        queued.task.cancel()  # type: ignore[union-attr]  # polled by hand below
        queued.jobs["lost-job"] = consumers._Queued(late, "m1", time.monotonic() - 6)  # type: ignore[arg-type]
        # Redis is down: the overdue job is answered before Redis is asked.
        with contextlib.suppress(ConnectionError):
            await queued.poll()
        return late, fresh, queued

    late, fresh, queued = asyncio.run(scenario())
    assert late.frames == [{"type": "error", "id": "m1", "error": deadline_error(5, "lost-job")}]
    assert late.frames[0]["error"].startswith("deadline: no answer within 5 s (job lost-job)")
    assert fresh.frames == []
    assert list(queued.jobs) == ["new-job"]  # still waiting for its answer
