"""/ws/decisions/ pushes every closed run, the interrupted and failed ones too."""

from __future__ import annotations

import asyncio

import pytest

from enrichment.consumers import DecisionsConsumer
from enrichment.models import Run
from tests.enrichment.test_consumers import connected, enrich_frame

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("in_memory_layer")]


async def test_a_run_interrupted_by_a_disconnect_is_pushed(user, summarizer) -> None:
    feed = await connected(user, DecisionsConsumer, "/ws/decisions/")
    communicator = await connected(user)
    await communicator.send_json_to(enrich_frame("gone", "bye http://127.0.0.1/slow"))
    assert (await communicator.receive_json_from(timeout=5))["type"] == "progress"
    await asyncio.sleep(0.2)  # the slow summarizer is now running
    await communicator.disconnect()
    pushed = await feed.receive_json_from(timeout=5)
    run = await Run.objects.aget()
    assert pushed == {"type": "decision", "run": pushed["run"]}
    assert pushed["run"]["runId"] == run.pk
    assert pushed["run"]["outcome"] == "interrupted"
    await feed.disconnect()


async def test_a_run_that_crashes_is_pushed_as_error(user, summarizer, monkeypatch) -> None:

    async def explode(*args, **kwargs):
        raise RuntimeError("pipeline exploded")

    from enrichment.pipeline.links import stage as links_stage

    monkeypatch.setattr(links_stage, "run_link_understanding", explode)
    feed = await connected(user, DecisionsConsumer, "/ws/decisions/")
    communicator = await connected(user)
    await communicator.send_json_to(enrich_frame("boom", "see http://127.0.0.1/a"))
    pushed = await feed.receive_json_from(timeout=5)
    assert pushed["run"]["outcome"] == "error"
    await communicator.disconnect()
    await feed.disconnect()
