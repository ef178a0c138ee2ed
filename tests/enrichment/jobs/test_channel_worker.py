"""The Redis path: daphne hands ``/ws/enrich/`` jobs to a ``runworker enrichment`` process.

Runs against the real Redis, in a database of its own (never FLUSHALL: CI shares the server).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
import websockets

from tests.live import live_server

pytestmark = pytest.mark.slow

STORE_SUMMARIZER = """
from enrichment.config.changes import config_replace
from tests.enrichment.conftest import summarizer_config
config_replace(document=summarizer_config())
"""

RUN_OWNER = """
from enrichment.models import Run
run = Run.objects.get(pk={run_id})
print("RUN", run.owner, run.outcome)
"""


def with_db(url: str, db: int) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{db}"))


@pytest.fixture
def private_redis_url(redis_url: str) -> Iterator[str]:
    """A Redis URL on an empty numbered database; our keys are deleted afterwards."""
    candidates = list(range(1, 16))
    random.shuffle(candidates)
    for db in candidates:
        url = with_db(redis_url, db)
        client = redis.Redis.from_url(url)
        try:
            if client.dbsize() == 0:
                break
        except redis.ResponseError:  # fewer databases configured
            continue
    else:
        pytest.skip("no empty Redis database to use")
    yield url
    for pattern in ("asgi*", "controlui*", "live*"):
        for key in client.scan_iter(match=pattern):
            client.delete(key)


async def enrich_over_socket(base_url: str, cookie: str, bodies: dict[str, str]) -> list[dict]:
    ws_url = base_url.replace("http://", "ws://") + "/ws/enrich/"
    frames: list[dict] = []
    async with websockets.connect(
        ws_url, origin=base_url, additional_headers={"Cookie": cookie}
    ) as ws:
        for request_id, body in bodies.items():
            await ws.send(
                json.dumps({"type": "enrich", "id": request_id, "message": {"body": body}})
            )
        pending = set(bodies)
        while pending:
            frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
            frames.append(frame)
            if frame["type"] in ("result", "error"):
                pending.discard(frame["id"])
    return frames


def test_jobs_run_in_the_worker_process(tmp_path, private_redis_url) -> None:
    with live_server(tmp_path, extra_env={"REDIS_URL": private_redis_url}, workers=0) as server:
        server.manage("shell", "-c", STORE_SUMMARIZER)
        worker = server.spawn([sys.executable, "manage.py", "runworker", "enrichment"])
        frames = asyncio.run(
            enrich_over_socket(
                server.base_url,
                server.cookie_header(),
                {"w2": "first http://127.0.0.1/w2/slow", "w1": "then http://127.0.0.1/w1"},
            )
        )
        assert worker.poll() is None, worker.stderr.read().decode()[-2000:] if worker.stderr else ""
        results = {frame["id"]: frame for frame in frames if frame["type"] == "result"}
        assert set(results) == {"w1", "w2"}, frames
        assert "Summary of http://127.0.0.1/w1" in results["w1"]["body"]
        assert "Summary of http://127.0.0.1/w2/slow" in results["w2"]["body"]
        # The worker's progress frames reach the socket (a run lasting over 0.5 s has them).
        assert "w2" in {frame["id"] for frame in frames if frame["type"] == "progress"}
        # One worker runs jobs side by side: the quick one is not stuck behind the slow one.
        assert [f["id"] for f in frames if f["type"] == "result"] == ["w1", "w2"]
        for result in results.values():
            output = server.manage("shell", "-c", RUN_OWNER.format(run_id=result["runId"]))
            line = next(line for line in output.stdout.splitlines() if line.startswith("RUN "))
            _, owner, outcome = line.split()
            # The run belongs to the worker process, not to daphne.
            assert owner == f"{socket.gethostname()}:{worker.pid}"
            assert outcome == "success"


def test_without_a_worker_jobs_wait_for_one(tmp_path, private_redis_url) -> None:
    """Jobs sent before any worker runs are picked up once one starts (they queue in Redis)."""
    with live_server(tmp_path, extra_env={"REDIS_URL": private_redis_url}, workers=0) as server:
        server.manage("shell", "-c", STORE_SUMMARIZER)
        cookie = server.cookie_header()

        async def scenario() -> list[dict]:
            ws_url = server.ws_url + "/ws/enrich/"
            async with websockets.connect(
                ws_url, origin=server.base_url, additional_headers={"Cookie": cookie}
            ) as ws:
                await ws.send(
                    json.dumps(
                        {"type": "enrich", "id": "q", "message": {"body": "http://127.0.0.1/q"}}
                    )
                )
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(ws.recv(), timeout=1.5)
                worker = server.spawn([sys.executable, "manage.py", "runworker", "enrichment"])
                frames = []
                while not frames or frames[-1]["type"] not in ("result", "error"):
                    frames.append(json.loads(await asyncio.wait_for(ws.recv(), timeout=60)))
                assert worker.poll() is None
                return frames

        frames = asyncio.run(scenario())
        assert frames[-1]["type"] == "result"
        assert "Summary of http://127.0.0.1/q" in frames[-1]["body"]


# --- in-process: the same dispatch and relay over the in-memory layer -------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("in_memory_layer")
async def test_consumer_hands_jobs_to_the_worker_channel(user, summarizer, settings) -> None:
    from channels.layers import get_channel_layer
    from channels.testing import ApplicationCommunicator, WebsocketCommunicator

    from enrichment.consumers import EnrichConsumer
    from enrichment.jobs.channel_worker import EnrichmentWorker
    from enrichment.jobs.dispatch import WORKER_CHANNEL
    from enrichment.models import Run

    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # only turns dispatching on; layer in memory
    layer = get_channel_layer()
    socket_ = WebsocketCommunicator(EnrichConsumer.as_asgi(), "/ws/enrich/")
    socket_.scope["user"] = user
    assert (await socket_.connect())[0]
    worker = ApplicationCommunicator(
        EnrichmentWorker.as_asgi(), {"type": "channel", "channel": WORKER_CHANNEL}
    )
    for request_id, body in (("slow", "http://127.0.0.1/slow"), ("quick", "http://127.0.0.1/q")):
        await socket_.send_json_to({"type": "enrich", "id": request_id, "message": {"body": body}})
        job = await asyncio.wait_for(layer.receive(WORKER_CHANNEL), timeout=5)
        assert job["type"] == "enrich.job" and job["id"] == request_id
        assert job["request"]["body"] == body
        await worker.send_input(job)  # what runworker does with each message

    frames = []
    while len([f for f in frames if f["type"] == "result"]) < 2:
        frames.append(await socket_.receive_json_from(timeout=20))
    assert [f["id"] for f in frames if f["type"] == "result"] == ["quick", "slow"]
    assert "slow" in {f["id"] for f in frames if f["type"] == "progress"}
    results = {f["id"]: f for f in frames if f["type"] == "result"}
    assert "Summary of http://127.0.0.1/slow" in results["slow"]["body"]
    owners = {run.owner async for run in Run.objects.all()}
    assert owners == {f"{socket.gethostname()}:{os.getpid()}"}
    await socket_.disconnect()
    worker.stop()


@pytest.mark.django_db(transaction=True)
async def test_full_worker_channel_is_an_error_frame_not_a_dropped_socket(
    user, summarizer, settings
) -> None:
    from channels.layers import channel_layers
    from channels.testing import WebsocketCommunicator

    from enrichment.consumers import EnrichConsumer

    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 1}}
    }
    channel_layers.backends.clear()
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # only turns dispatching on; layer in memory
    try:
        socket_ = WebsocketCommunicator(EnrichConsumer.as_asgi(), "/ws/enrich/")
        socket_.scope["user"] = user
        assert (await socket_.connect())[0]
        for request_id in ("queued", "refused"):
            await socket_.send_json_to(
                {"type": "enrich", "id": request_id, "message": {"body": "hello"}}
            )
        assert await socket_.receive_json_from(timeout=5) == {
            "type": "error",
            "id": "refused",
            "error": "the enrichment workers are busy; try again",
        }
        # Still open, and the refused id may be sent again.
        await socket_.send_json_to({"type": "enrich", "id": "refused", "message": {"body": "x"}})
        assert (await socket_.receive_json_from(timeout=5))["id"] == "refused"
        await socket_.disconnect()
    finally:
        channel_layers.backends.clear()


async def test_a_redelivered_job_runs_once(monkeypatch) -> None:
    """channels_redis can hand one job to two workers; the claim makes the second a no-op."""
    from django.core.cache import cache

    from enrichment.jobs.channel_worker import EnrichmentWorker
    from enrichment.services import runs as services

    runs: list[str] = []
    sent: list[dict] = []

    async def fake_frame(*, request, request_id, on_progress):
        runs.append(request_id)
        return {"type": "result", "id": request_id}

    class Layer:
        async def send(self, channel, message):
            sent.append(message)

    monkeypatch.setattr(services, "enrichment_frame", fake_frame)
    await cache.adelete("enrichment-job:job-42")
    message = {
        "type": "enrich.job",
        "job": "job-42",
        "id": "req-1",
        "reply_channel": "reply",
        "request": {"body": "hello"},
    }
    first, second = EnrichmentWorker(), EnrichmentWorker()
    first.channel_layer = second.channel_layer = Layer()
    await first.enrich_job(message)
    await second.enrich_job(message)
    await asyncio.gather(*first.jobs, *getattr(second, "jobs", ()))
    assert runs == ["req-1"]
    assert [m["frame"]["type"] for m in sent] == ["result"]
