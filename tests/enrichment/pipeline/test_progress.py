"""A run's progress events wait until the run has lasted ``after`` seconds (HeldProgress)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from enrichment.pipeline.stages import HeldProgress


class Recorder:
    def __init__(self, *, fail_on: str | None = None) -> None:
        self.texts: list[str] = []
        self.fail_on = fail_on

    async def __call__(self, event: dict[str, Any]) -> None:
        if event["text"] == self.fail_on:
            raise ConnectionError("the socket went away")
        self.texts.append(event["text"])


async def test_events_of_a_run_that_ends_within_the_hold_are_never_sent() -> None:
    sink = Recorder()
    progress = HeldProgress(sink, after=0.2)
    await progress({"text": "running a"})
    await progress({"text": "running b"})
    await progress.close()
    await asyncio.sleep(0.3)  # past the hold: nothing comes late
    assert sink.texts == []


async def test_held_events_go_out_in_order_at_the_hold_then_later_ones_at_once() -> None:
    sink = Recorder()
    progress = HeldProgress(sink, after=0.05)
    await progress({"text": "one"})
    await progress({"text": "two"})
    assert sink.texts == []
    await asyncio.sleep(0.1)
    assert sink.texts == ["one", "two"]
    await progress({"text": "three"})
    assert sink.texts == ["one", "two", "three"]
    await progress.close()
    await progress({"text": "after the result"})
    assert sink.texts == ["one", "two", "three"]


async def test_zero_sends_every_event_at_once() -> None:
    sink = Recorder()
    progress = HeldProgress(sink, after=0)
    await progress({"text": "now"})
    assert sink.texts == ["now"]
    await progress.close()


async def test_a_failing_sink_drops_that_event_only() -> None:
    sink = Recorder(fail_on="lost")
    progress = HeldProgress(sink, after=0.01)
    await progress({"text": "lost"})
    await progress({"text": "kept"})
    await asyncio.sleep(0.05)
    assert sink.texts == ["kept"]
    await progress.close()


async def test_close_waits_for_a_release_in_flight() -> None:
    sent: list[str] = []
    release_started = asyncio.Event()

    async def slow_sink(event: dict[str, Any]) -> None:
        release_started.set()
        await asyncio.sleep(0.05)
        sent.append(event["text"])

    progress = HeldProgress(slow_sink, after=0.01)
    await progress({"text": "a"})
    await progress({"text": "b"})
    await release_started.wait()
    await progress.close()  # the send in flight is cancelled; "b" never goes out
    await asyncio.sleep(0.1)
    assert sent == []


async def test_cancelling_the_run_during_close_still_cancels_it() -> None:
    started = asyncio.Event()

    async def stuck_sink(event: dict[str, Any]) -> None:
        started.set()
        await asyncio.sleep(10)

    async def run() -> None:
        progress = HeldProgress(stuck_sink, after=0.01)
        await progress({"text": "x"})
        await started.wait()
        await progress.close()
        await asyncio.sleep(10)  # only reached if the cancellation below were swallowed

    task = asyncio.create_task(run())
    await started.wait()
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=1)
