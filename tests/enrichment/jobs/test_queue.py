"""The job queue on Dramatiq (``enrichment.jobs.queue`` + ``enrichment.jobs.worker``).

Against the machine's Redis (CI: db 0), every key under a prefix of its own that is deleted
afterwards, so parallel runs never meet.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import dramatiq
import pytest
import redis
import websockets
from asgiref.sync import async_to_sync, sync_to_async
from channels.exceptions import ChannelFull
from channels.layers import channel_layers, get_channel_layer
from dramatiq import Message

from enrichment.config.cache import config_in_force
from enrichment.jobs import queue as jobqueue
from enrichment.models import Run
from enrichment.services.runs import EnrichRequest

HOST = socket.gethostname()


def dead_owner() -> str:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return f"{HOST}:{process.pid}"


@pytest.fixture
def job_stream(settings, redis_url) -> Iterator[redis.Redis]:
    """Queue mode on: Redis layer and REDIS_URL with a fresh prefix; a sync client."""
    prefix = f"t{uuid.uuid4().hex[:10]}"
    settings.REDIS_URL = redis_url
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "common.channel_layer.RedisChannelLayer",
            "CONFIG": {"hosts": [redis_url], "prefix": prefix},
        }
    }
    channel_layers.backends.clear()
    client = redis.Redis.from_url(redis_url)
    yield client
    channel_layers.backends.clear()
    for key in client.scan_iter(match=f"{prefix}*"):
        client.delete(key)


async def submit(body: str, request_id: str = "r1", reply: str = "nobody") -> str:
    return await jobqueue.job_submit(
        request=EnrichRequest(body=body), request_id=request_id, reply_channel=reply
    )


def queued_jobs(client: redis.Redis) -> list[dict[str, str]]:
    """The jobs waiting in the queue, oldest first (as Dramatiq holds them)."""
    names = jobqueue.keys()
    ids = client.lrange(names.queue, 0, -1)
    bodies = client.hmget(names.messages, ids) if ids else []
    return [Message.decode(body).args[0] for body in bodies if body is not None]


async def waiting_jobs(client: redis.Redis, count: int) -> list[dict[str, str]]:
    """The queued jobs once the consumer has queued ``count`` of them (it handles the
    socket's frames on its own schedule: a fixed pause lost the race on a loaded machine)."""
    deadline = time.monotonic() + 10
    while len(queued_jobs(client)) < count and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return queued_jobs(client)


def fetch_as_dead_worker(client: redis.Redis) -> str:
    """A worker takes every queued message, then dies (its heartbeat stops); returns its
    Dramatiq id. Its messages stay in its ack set until a live worker's maintenance."""
    ghost = jobqueue.broker_create()
    ghost.do_fetch(jobqueue.QUEUE, 100)
    client.zadd(f"{jobqueue.keys().namespace}:__heartbeats__", {ghost.broker_id: 0})
    ghost.close()
    return ghost.broker_id


@contextlib.contextmanager
def dramatiq_worker(threads: int = 2) -> Iterator[Any]:
    """A real Dramatiq worker of the queue in this process (threads + its event loop)."""
    from enrichment.jobs import worker as job_worker

    broker = job_worker.worker_broker()
    worker = dramatiq.Worker(broker, queues={jobqueue.QUEUE}, worker_threads=threads)
    worker.start()
    try:
        yield broker
    finally:
        worker.stop(timeout=10_000)
        broker.close()
        job_worker._runner = None


async def final_of(client: redis.Redis, job: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while (stored := client.get(jobqueue.keys().final(job))) is None:
        assert time.monotonic() < deadline, f"no final frame for job {job}"
        await asyncio.sleep(0.05)
    return json.loads(stored)


# --- the claim ---------------------------------------------------------------------------


async def test_a_job_is_claimed_by_one_worker_only(job_stream) -> None:
    from enrichment.jobs.worker import JobRunner

    first, second = JobRunner(), JobRunner()
    second.owner = "other-host:4242"
    assert await first.claim("job-1") is True
    assert await first.claim("job-1") == first.owner  # delivered again: already claimed
    assert await second.claim("job-1") == first.owner  # the claimant, not a second run
    assert await second.claim("job-2") is True


async def test_submitted_jobs_wait_in_the_dramatiq_queue_in_order(job_stream) -> None:
    jobs = [await submit(f"job {n}", request_id=f"r{n}") for n in range(3)]
    waiting = queued_jobs(job_stream)
    assert [job["job"] for job in waiting] == jobs
    assert [json.loads(job["request"])["body"] for job in waiting] == ["job 0", "job 1", "job 2"]


async def test_a_full_queue_refuses_a_job_without_writing_any_of_it(
    job_stream, monkeypatch
) -> None:
    monkeypatch.setattr(jobqueue, "MAX_QUEUED_JOBS", 2)
    queued = [await submit(f"job {n}", request_id=f"r{n}") for n in range(2)]
    with pytest.raises(ChannelFull):
        await submit("one too many", request_id="r2")
    assert [job["job"] for job in queued_jobs(job_stream)] == queued
    # Nothing of the refused job is left behind: only the two queued messages are stored.
    assert job_stream.hlen(jobqueue.keys().messages) == 2


def test_an_idle_worker_looks_at_the_job_queue_at_least_every_idle_poll(job_stream) -> None:
    """Dramatiq's consumer sleeps longer after each empty look (up to seconds): a message sent
    after a quiet spell waited that long before a worker took it."""
    broker = jobqueue.broker_create()
    consumer = broker.consume(jobqueue.QUEUE, prefetch=1, timeout=1000)  # the worker's
    try:
        waits = []
        for _ in range(16):  # Dramatiq's own backoff would reach 0.5-1 s by the 8th look
            started = time.monotonic()
            assert next(consumer) is None
            waits.append(time.monotonic() - started)
        assert max(waits) < (jobqueue.IDLE_POLL_MS + 150) / 1000, waits
        job = async_to_sync(submit)("after a quiet spell")
        message = next(consumer)
        assert message is not None and message.args[0]["job"] == job
        consumer.ack(message)
    finally:
        consumer.close()
        broker.close()


# --- redelivered jobs: the claimant died, or lives ---------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_job_the_dead_worker_never_started_runs_once_elsewhere(
    job_stream, summarizer
) -> None:
    from enrichment.jobs.worker import JobRunner

    job = await submit("see http://127.0.0.1/never-started")
    (fields,) = queued_jobs(job_stream)
    job_stream.set(jobqueue.keys().claim(job), dead_owner())  # claimed, then killed
    runner = JobRunner()
    await runner.handle(fields)

    final = json.loads(job_stream.get(jobqueue.keys().final(job)))
    assert final["type"] == "result" and final["id"] == "r1"
    assert "Summary of http://127.0.0.1/never-started" in final["body"]
    runs = [run async for run in Run.objects.filter(job=job)]
    assert [(run.pk, run.outcome) for run in runs] == [(final["runId"], "success")]
    # Delivered again (a late redelivery, to this worker or another): the stored answer,
    # no second run.
    job_stream.delete(jobqueue.keys().final(job))
    job_stream.set(jobqueue.keys().final(job), json.dumps(final))
    await runner.handle(fields)
    other = JobRunner()
    other.owner = "other-host:1"
    await other.handle(fields)
    assert await Run.objects.filter(job=job).acount() == 1


@pytest.mark.django_db(transaction=True)
async def test_a_run_the_dead_worker_started_is_interrupted_and_answered(job_stream) -> None:
    from enrichment.jobs.worker import JobRunner

    job = await submit("half done", request_id="r7")
    (fields,) = queued_jobs(job_stream)
    ghost = dead_owner()
    job_stream.set(jobqueue.keys().claim(job), ghost)
    run = await Run.objects.acreate(original_body="half done", owner=ghost, job=job)

    await JobRunner().handle(fields)

    await run.arefresh_from_db()
    assert run.outcome == "interrupted" and run.finished_at is not None
    final = json.loads(job_stream.get(jobqueue.keys().final(job)))
    assert final == {
        "type": "error",
        "id": "r7",
        "error": f"interrupted: the worker running this request stopped (run {run.pk})",
    }
    assert await Run.objects.acount() == 1  # not run a second time


@pytest.mark.django_db(transaction=True)
async def test_a_redelivery_to_the_process_answering_the_job_is_dropped(job_stream) -> None:
    """Dramatiq redelivers the messages of a worker whose heartbeat looked stale (e.g. across
    a Redis restart) though it lives on: the delivery it is answering answers, once."""
    from enrichment.jobs.worker import JobRunner

    job = await submit("answered here")
    (fields,) = queued_jobs(job_stream)
    runner = JobRunner()
    runner.running.add(job)  # this process is answering the first delivery
    await runner.handle(fields)

    assert job_stream.get(jobqueue.keys().claim(job)) is None  # not even claimed again
    assert job_stream.get(jobqueue.keys().final(job)) is None
    assert await Run.objects.acount() == 0


@pytest.mark.django_db(transaction=True)
async def test_the_job_of_a_live_worker_is_left_alone(job_stream) -> None:
    from enrichment.jobs.worker import JobRunner

    job = await submit("busy elsewhere")
    (fields,) = queued_jobs(job_stream)
    owner = f"{HOST}:{os.getpid()}"  # a process that is alive
    job_stream.set(jobqueue.keys().claim(job), owner)
    runner = JobRunner()
    runner.owner = "other-host:1"
    await runner.handle(fields)

    assert job_stream.get(jobqueue.keys().final(job)) is None
    assert await Run.objects.acount() == 0


@pytest.mark.django_db(transaction=True)
async def test_the_messages_of_a_worker_whose_heartbeat_stopped_are_run_by_another(
    job_stream, summarizer
) -> None:
    """Dramatiq's own redelivery: a live worker's maintenance puts them back on the queue."""
    jobs = [await submit(f"see http://127.0.0.1/orphan{n}", request_id=f"o{n}") for n in range(3)]
    fetch_as_dead_worker(job_stream)
    assert queued_jobs(job_stream) == []  # held by the dead worker
    with dramatiq_worker() as broker:
        from enrichment.jobs.worker import runner

        for _ in range(2):  # the heartbeat's maintenance
            runner().beat(job_stream, broker)
        finals = [await final_of(job_stream, job) for job in jobs]
    assert [frame["type"] for frame in finals] == ["result"] * 3
    assert await Run.objects.filter(job__in=jobs, outcome="success").acount() == 3


# --- failures: retried with backoff, then a dead letter -----------------------------------


def job_fields(job: str, body: str, request_id: str = "r1") -> dict[str, str]:
    return {
        "job": job,
        "id": request_id,
        "reply_channel": "nobody",
        "request": json.dumps(EnrichRequest(body=body).to_json()),
    }


@pytest.mark.django_db(transaction=True)
async def test_a_job_that_failed_before_its_run_existed_gives_its_claim_back_for_a_retry(
    job_stream, summarizer, monkeypatch
) -> None:
    from django.db import OperationalError

    from enrichment.jobs.worker import JobRunner, TransientFailure
    from enrichment.services import runs as services

    def down():
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(services, "config_in_force", down)
    with pytest.raises(TransientFailure, match="failed before its run was recorded"):
        await JobRunner().run(job_fields("job-db-1", "see http://127.0.0.1/again"))
    assert job_stream.get(jobqueue.keys().claim("job-db-1")) is None  # any worker may retry
    assert await Run.objects.acount() == 0


@pytest.mark.django_db(transaction=True)
async def test_a_transient_failure_is_retried_by_the_queue_and_then_succeeds(
    job_stream, summarizer, monkeypatch, settings
) -> None:
    from django.db import OperationalError

    from enrichment.services import runs as services

    real_load, calls = config_in_force, []

    def flaky_load():
        calls.append(time.monotonic())
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real_load()

    monkeypatch.setattr(services, "config_in_force", flaky_load)
    job = await submit("see http://127.0.0.1/retried", request_id="again")
    retrying_seen = 0
    with dramatiq_worker():
        # While it waits for its retry, operators see it (/api/health, /metrics).
        deadline = time.monotonic() + 30
        while job_stream.get(jobqueue.keys().final(job)) is None:
            assert time.monotonic() < deadline, "no final frame"
            status = await sync_to_async(jobqueue.queue_status)()
            retrying_seen = max(retrying_seen, status.retrying)
            await asyncio.sleep(0.05)
        final = await final_of(job_stream, job)
    assert retrying_seen == 1
    assert final["type"] == "result" and final["id"] == "again"
    assert len(calls) == 2
    assert calls[1] - calls[0] >= 0.5  # after a backoff, not at once
    assert [run.outcome async for run in Run.objects.filter(job=job)] == ["success"]


@pytest.mark.django_db(transaction=True)
async def test_a_job_that_keeps_failing_is_a_dead_letter_answered_recorded_and_rerunnable(
    job_stream, summarizer, monkeypatch, settings, user_client
) -> None:
    from django.db import OperationalError

    from enrichment.jobs.rerun import RERUNNABLE
    from enrichment.services import runs as services

    settings.ENRICHMENT_JOB_RETRIES = 1
    calls = []

    def down():
        calls.append(1)
        raise OperationalError("could not connect to server: Connection refused")

    monkeypatch.setattr(services, "config_in_force", down)
    job = await submit("keeps failing http://127.0.0.1/dead", request_id="dl")
    with dramatiq_worker():
        final = await final_of(job_stream, job)
        deadline = time.monotonic() + 10
        while not await Run.objects.filter(job=job).aexists():
            assert time.monotonic() < deadline, "the dead letter was not recorded"
            await asyncio.sleep(0.05)
    assert len(calls) == 2  # the first attempt and one retry
    assert final["type"] == "error" and final["id"] == "dl"
    assert final["error"].startswith("dead-letter: the job queue gave up after 2 attempt(s)")
    assert "TransientFailure: it failed before its run was recorded" in final["error"]
    run = await Run.objects.aget(job=job)
    assert run.outcome == "dead-letter" and run.outcome in RERUNNABLE
    assert run.original_body == "keeps failing http://127.0.0.1/dead"
    assert run.error == final["error"] and run.finished_at is not None
    assert job_stream.zcard(jobqueue.keys().dead_letters) == 1
    status = await sync_to_async(jobqueue.queue_status)()
    assert status.dead_letters == 1 and status.queued == 0 and status.running == 0
    # Operators find it: the history's outcome filter and the API.
    page = await sync_to_async(user_client.get)("/decisions/?outcome=dead-letter")
    assert page.status_code == 200 and f"/decisions/{run.pk}/" in page.content.decode()
    from enrichment.models import Problem

    assert [p.kind async for p in Problem.objects.all()] == ["run-dead-letter"]
    detail = await sync_to_async(user_client.get)(f"/decisions/{run.pk}/")
    assert detail.status_code == 200
    assert "dead-letter" in detail.content.decode()
    assert "the job queue gave up after 2 attempt(s)" in detail.content.decode()
    api = await sync_to_async(user_client.get)("/api/decisions?outcome=dead-letter")
    assert [item["runId"] for item in api.json()["items"]] == [run.pk]
    # /api/health says so (and stays 200: this process serves).
    health = await sync_to_async(user_client.get)("/api/health")
    assert health.status_code == 200 and health.json()["status"] == "degraded"
    assert health.json()["jobs"]["givenUp"] == 1
    assert "1 job(s) given up by the job queue" in health.json()["jobs"]["detail"]
    assert health.json()["workers"]["deadLetters"] == 1
    # Recorded once, however often the dead letters are read again.
    from enrichment.services.dead_letters import dead_letters_record

    assert (
        await sync_to_async(dead_letters_record)(await sync_to_async(jobqueue.dead_letters_read)())
        == []
    )


def give_up(client: redis.Redis, body: str, failed_at_ms: int) -> str:
    """A job the queue gave up on, in Dramatiq's dead-letter queue as a worker leaves it."""
    job = uuid.uuid4().hex
    message = jobqueue.job_message(
        {
            "job": job,
            "id": "r",
            "reply_channel": "nobody",
            "request": json.dumps(EnrichRequest(body=body).to_json()),
        }
    )
    message.options["traceback"] = "Traceback:\nTransientFailure: database down"
    message.options["retries"] = 6
    names = jobqueue.keys()
    client.hset(names.dead_letter_messages, message.message_id, message.encode())
    client.zadd(names.dead_letters, {message.message_id: failed_at_ms})
    return job


@pytest.mark.django_db(transaction=True)
def test_dead_letters_are_read_again_only_when_a_job_was_given_up_since(
    job_stream, monkeypatch
) -> None:
    """A worker syncs dead letters every few heartbeats: their messages (attachments of up to
    25 MiB) are read only when the dead-letter queue changed, and a sync that failed (the
    database down) is tried again."""
    from django.db import OperationalError

    from enrichment.jobs.worker import DeadLetterSync
    from enrichment.services import dead_letters

    reads = []
    read = jobqueue.dead_letters_read

    def counted() -> Any:
        reads.append(1)
        return read()

    monkeypatch.setattr(jobqueue, "dead_letters_read", counted)
    sync = DeadLetterSync()
    now = int(time.time() * 1000)
    first = give_up(job_stream, "first http://127.0.0.1/a", now)
    sync()
    sync()
    assert len(reads) == 1
    assert [run.job for run in Run.objects.filter(outcome="dead-letter")] == [first]

    record = dead_letters.dead_letters_record

    def database_down(letters: Any) -> Any:
        raise OperationalError("could not connect to server: Connection refused")

    monkeypatch.setattr("enrichment.jobs.worker.dead_letters_record", database_down)
    second = give_up(job_stream, "second http://127.0.0.1/b", now + 1)
    sync()  # read, but not recorded
    monkeypatch.setattr("enrichment.jobs.worker.dead_letters_record", record)
    sync()  # read again: recorded now
    sync()
    assert len(reads) == 3
    assert sorted(Run.objects.filter(outcome="dead-letter").values_list("job", flat=True)) == (
        sorted([first, second])
    )
    error = Run.objects.get(job=second).error
    assert error == "dead-letter: the job queue gave up after 6 attempt(s): " + (
        "TransientFailure: database down"
    )


@pytest.mark.django_db(transaction=True)
async def test_a_job_that_waited_past_the_deadline_is_not_run_but_recorded(
    job_stream, summarizer, settings
) -> None:
    """Its client had its deadline error frame already: running it now would be a run nobody
    waits for. It ends as a dead letter that says why."""
    settings.ENRICHMENT_JOB_DEADLINE_SECONDS = 1
    job = await submit("too late http://127.0.0.1/late", request_id="late")
    await asyncio.sleep(1.2)
    with dramatiq_worker():
        final = await final_of(job_stream, job)
        deadline = time.monotonic() + 10
        while not await Run.objects.filter(job=job).aexists():
            assert time.monotonic() < deadline, "the expired job was not recorded"
            await asyncio.sleep(0.05)
    assert final["type"] == "error" and final["id"] == "late"
    assert final["error"] == (
        "dead-letter: the job queue gave up after 1 attempt(s): it waited in the queue "
        "longer than the job deadline (1 s)"
    )
    runs = [(run.outcome, run.error) async for run in Run.objects.all()]
    assert runs == [("dead-letter", final["error"])]  # recorded, never run


@pytest.mark.parametrize(
    ("error", "status"),
    [
        ("dead-letter: the job queue gave up after 6 attempt(s): database down", 503),
        ("interrupted: the worker running this request stopped (run 7)", 503),
        ("enrichment failed: the message has no text", 400),
    ],
)
async def test_rest_answers_a_job_given_up_or_cut_short_with_503(
    job_stream, monkeypatch, error, status
) -> None:
    """POST /api/enrich through the workers: a job the queue gave up on, or cut short, is the
    service's failure (503, try again), not the request's."""
    from common.errors import DomainError

    async def one_worker() -> int:
        return 1

    monkeypatch.setattr(jobqueue, "live_worker_count", one_worker)
    answer = asyncio.create_task(
        jobqueue.enrichment_answer(request=EnrichRequest(body="hello"), timeout=10)
    )
    (fields,) = await waiting_jobs(job_stream, 1)
    frame = {"type": "error", "id": fields["id"], "error": error}
    job_stream.set(jobqueue.keys().final(fields["job"]), json.dumps(frame))
    with pytest.raises(DomainError) as raised:
        await answer
    assert raised.value.status == status and raised.value.detail == error


@pytest.mark.django_db(transaction=True)
async def test_a_run_whose_last_save_failed_is_closed_and_the_answer_says_why(
    job_stream, summarizer, monkeypatch
) -> None:
    from django.db import OperationalError

    from enrichment.jobs.worker import JobRunner
    from enrichment.services import runs as services

    def broken_finish(**kwargs):
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(services, "run_finish", broken_finish)
    frame = await JobRunner().run(job_fields("job-db-2", "see http://127.0.0.1/lost"))

    run = await Run.objects.aget(job="job-db-2")  # one run, not retried into a second
    assert run.outcome == "error" and run.finished_at is not None
    # services.run_finish_or_fail closes the run and names it; the worker relays that answer.
    assert frame == {
        "type": "error",
        "id": "r1",
        "error": f"enrichment ran but its result could not be stored (run {run.pk}); "
        "see the server log",
    }
    assert "terminating connection" in run.error


# --- the socket: finals fetched, in-flight released, "queued, no worker" ----------------


@pytest.mark.django_db(transaction=True)
async def test_socket_gets_stored_finals_and_frees_its_in_flight_slots(job_stream, user) -> None:
    from channels.testing import WebsocketCommunicator

    from enrichment.consumers import MAX_IN_FLIGHT, QUEUED_NO_WORKER, EnrichConsumer

    communicator = WebsocketCommunicator(EnrichConsumer.as_asgi(), "/ws/enrich/")
    communicator.scope["user"] = user
    assert (await communicator.connect())[0]
    for number in range(MAX_IN_FLIGHT + 1):
        await communicator.send_json_to(
            {"type": "enrich", "id": f"m{number}", "message": {"body": "hi"}}
        )
    assert await communicator.receive_json_from(timeout=10) == {
        "type": "error",
        "id": f"m{MAX_IN_FLIGHT}",
        "error": f"too many requests in flight on this socket (limit {MAX_IN_FLIGHT})",
    }
    # Nobody works the queue: each waiting request is told so (once), not left in silence.
    notices = [await communicator.receive_json_from(timeout=10) for _ in range(MAX_IN_FLIGHT)]
    assert {frame["id"] for frame in notices} == {f"m{n}" for n in range(MAX_IN_FLIGHT)}
    assert {(frame["type"], frame["stage"], frame["text"]) for frame in notices} == {
        ("progress", "queued", QUEUED_NO_WORKER)
    }
    # A worker answered every job but the frames never crossed the channel layer: the
    # socket fetches the stored finals, and its slots are free again.
    names = jobqueue.keys()
    for fields in queued_jobs(job_stream):
        job, request_id = fields["job"], fields["id"]
        frame = {"type": "error", "id": request_id, "error": "stored"}
        job_stream.set(names.final(job), json.dumps(frame))
    finals = [await communicator.receive_json_from(timeout=10) for _ in range(MAX_IN_FLIGHT)]
    assert sorted(frame["id"] for frame in finals) == sorted(f"m{n}" for n in range(MAX_IN_FLIGHT))
    await communicator.send_json_to({"type": "enrich", "id": "m0", "message": {"body": "again"}})
    assert await communicator.receive_nothing(timeout=0.5)  # accepted and queued, no refusal
    await communicator.disconnect()


async def test_each_socket_gets_its_own_stored_finals_and_no_late_progress(
    job_stream, user
) -> None:
    from channels.testing import WebsocketCommunicator

    from enrichment.consumers import EnrichConsumer

    sockets = []
    for _ in range(2):
        communicator = WebsocketCommunicator(EnrichConsumer.as_asgi(), "/ws/enrich/")
        communicator.scope["user"] = user
        assert (await communicator.connect())[0]
        sockets.append(communicator)
    # The same request ids on both sockets: only the job tells them apart.
    for number, communicator in enumerate(sockets):
        for request_id in ("a", "b"):
            message = {"body": f"socket {number} {request_id}"}
            await communicator.send_json_to(
                {"type": "enrich", "id": request_id, "message": message}
            )
    names = jobqueue.keys()
    jobs = {}
    for fields in await waiting_jobs(job_stream, 4):
        request = json.loads(fields["request"])
        job = fields["job"]
        jobs[request["body"]] = (job, fields["reply_channel"])
        frame = {"type": "error", "id": fields["id"], "error": request["body"]}
        job_stream.set(names.final(job), json.dumps(frame))
    for number, communicator in enumerate(sockets):
        finals = [await communicator.receive_json_from(timeout=10) for _ in range(2)]
        assert sorted(frame["error"] for frame in finals) == [
            f"socket {number} a",
            f"socket {number} b",
        ]
    # A worker's progress frame for a job already answered does not reach the socket.
    job, reply_channel = jobs["socket 0 a"]
    late = {"type": "progress", "id": "a", "stage": "links", "text": "late"}
    await get_channel_layer().send(
        reply_channel, {"type": "enrich.frame", "frame": late, "job": job}
    )
    assert await sockets[0].receive_nothing(timeout=0.5)
    for communicator in sockets:
        await communicator.disconnect()


# --- /api/health --------------------------------------------------------------------------


@pytest.mark.django_db
def test_health_degrades_without_a_live_worker_and_reports_queue_depth(
    user_client, job_stream
) -> None:
    names = jobqueue.keys()
    for number in range(3):
        async_to_sync(submit)(f"job {number}")
    job_stream.zadd(names.workers, {"gone:1": time.time() - 60})  # beat a minute ago

    response = user_client.get("/api/health")
    assert response.status_code == 200  # degraded, but this process serves
    body = response.json()
    assert body["status"] == "degraded"
    assert body["workers"] == {
        "ok": False,
        "live": [],
        "queued": 3,
        "running": 0,
        "retrying": 0,
        "deadLetters": 0,
        "detail": "no enrichment worker is alive (runworker enrichment)",
    }

    job_stream.zadd(names.workers, {"vm:7": time.time()})
    response = user_client.get("/api/health")
    assert response.status_code == 200
    assert response.json()["workers"]["live"] == ["vm:7"]


# --- real processes: SIGKILL of a worker in the middle of its runs ------------------------

STORE_SUMMARIZER = """
from enrichment.config.changes import config_replace
from tests.enrichment.conftest import summarizer_config
config_replace(document=summarizer_config())
"""
RUNS = """
from enrichment.models import Run
for run in Run.objects.order_by("pk"):
    print("RUN", run.original_body.split()[0], run.outcome)
"""


@pytest.mark.slow
def test_killed_worker_jobs_are_answered_once_by_the_other(tmp_path, redis_url) -> None:
    from tests.live import live_server

    prefix = f"kill{uuid.uuid4().hex[:8]}"
    env = {"REDIS_URL": redis_url, "CHANNEL_LAYER_PREFIX": prefix}
    try:
        with live_server(tmp_path, extra_env=env, workers=0) as server:
            server.manage("shell", "-c", STORE_SUMMARIZER)
            victim = server.spawn([sys.executable, "manage.py", "runworker", "enrichment"])
            cookie = server.cookie_header()
            ids = [f"k{n}" for n in range(8)]

            async def scenario() -> list[dict]:
                async with websockets.connect(
                    server.ws_url + "/ws/enrich/",
                    origin=server.base_url,
                    additional_headers={"Cookie": cookie},
                ) as ws:
                    for request_id in ids:
                        body = f"{request_id} http://127.0.0.1/{request_id}/slow"
                        await ws.send(
                            json.dumps(
                                {"type": "enrich", "id": request_id, "message": {"body": body}}
                            )
                        )
                    frames = [json.loads(await asyncio.wait_for(ws.recv(), timeout=60))]
                    while frames[-1].get("stage") != "links":  # the victim is mid-run
                        frames.append(json.loads(await asyncio.wait_for(ws.recv(), 60)))
                    os.kill(victim.pid, signal.SIGKILL)
                    victim.wait()
                    server.spawn([sys.executable, "manage.py", "runworker", "enrichment"])
                    finals: list[dict] = []
                    while len(finals) < len(ids):
                        frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=90))
                        if frame["type"] != "progress":
                            finals.append(frame)
                    with pytest.raises(TimeoutError):  # and nothing twice
                        await asyncio.wait_for(ws.recv(), timeout=3)
                    return finals

            finals = asyncio.run(scenario())
            assert sorted(frame["id"] for frame in finals) == sorted(ids)
            interrupted = [f for f in finals if f["type"] == "error"]
            assert interrupted, "the kill landed mid-run: some request must say so"
            assert all("interrupted: the worker" in f["error"] for f in interrupted)
            output = server.manage("shell", "-c", RUNS).stdout
            runs = [line.split()[1:] for line in output.splitlines() if line.startswith("RUN ")]
            assert sorted(marker for marker, _ in runs) == sorted(ids)  # one run each
            outcomes = {marker: outcome for marker, outcome in runs}
            assert "running" not in outcomes.values()
            for frame in interrupted:
                assert outcomes[frame["id"]] == "interrupted"
    finally:
        client = redis.Redis.from_url(redis_url)
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)


@pytest.mark.slow
def test_rest_enrich_runs_in_a_worker_when_one_is_alive(tmp_path, redis_url) -> None:
    import httpx

    from tests.live import live_server

    prefix = f"rest{uuid.uuid4().hex[:8]}"
    env = {"REDIS_URL": redis_url, "CHANNEL_LAYER_PREFIX": prefix}
    try:
        with live_server(tmp_path, extra_env=env, workers=1) as server:
            server.manage("shell", "-c", STORE_SUMMARIZER)
            token = server.manage("create_api_token", "live-user").stdout.strip()
            worker = server.extra_processes[0]
            deadline = time.monotonic() + 30
            while httpx.get(server.base_url + "/api/health").json()["status"] != "ok":
                assert time.monotonic() < deadline, "the worker never became live"
                time.sleep(0.3)
            response = httpx.post(
                server.base_url + "/api/enrich",
                json={"body": "rest http://127.0.0.1/rest"},
                headers={"Authorization": f"Bearer {token}"},
                timeout=60,
            )
            assert response.status_code == 200, response.text
            body = response.json()
            assert "Summary of http://127.0.0.1/rest" in body["body"]
            output = server.manage("shell", "-c", RUNS.replace("run.outcome", "run.owner")).stdout
            owners = [line.split()[2] for line in output.splitlines() if line.startswith("RUN ")]
            assert owners == [f"{HOST}:{worker.pid}"]  # run by the worker, not by daphne
    finally:
        client = redis.Redis.from_url(redis_url)
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)


@pytest.mark.slow
def test_worker_and_sockets_ride_out_a_redis_restart(tmp_path) -> None:
    """A private redis-server (never the shared one) is restarted under a live socket."""
    import shutil

    from tests.live import free_port, live_server

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    command = [
        "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path),
        "--appendonly", "yes", "--appendfsync", "always", "--save", "",
    ]  # fmt: skip

    def start_redis() -> subprocess.Popen[bytes]:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                if redis.Redis(port=port).ping():
                    return process
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "private redis did not start"
                time.sleep(0.1)

    redis_process = start_redis()
    try:
        env = {"REDIS_URL": f"redis://127.0.0.1:{port}/0"}
        with live_server(tmp_path, extra_env=env, workers=1) as server:
            server.manage("shell", "-c", STORE_SUMMARIZER)
            worker = server.extra_processes[0]
            cookie = server.cookie_header()

            async def scenario() -> list[dict]:
                nonlocal redis_process
                async with websockets.connect(
                    server.ws_url + "/ws/enrich/",
                    origin=server.base_url,
                    additional_headers={"Cookie": cookie},
                ) as ws:
                    for request_id in ("before", "during"):
                        body = f"{request_id} http://127.0.0.1/{request_id}/slow"
                        frame = {"type": "enrich", "id": request_id, "message": {"body": body}}
                        await ws.send(json.dumps(frame))
                        if request_id == "before":
                            await asyncio.sleep(0.5)
                            redis_process.terminate()  # mid-run: AOF keeps the stream
                            redis_process.wait(timeout=30)
                    await asyncio.sleep(2)  # "during" waits in daphne for Redis to return
                    redis_process = start_redis()
                    finals = []
                    while len(finals) < 2:
                        frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=90))
                        if frame["type"] != "progress":
                            finals.append(frame)
                    return finals

            finals = asyncio.run(scenario())
            assert {(frame["id"], frame["type"]) for frame in finals} == {
                ("before", "result"),
                ("during", "result"),
            }
            assert worker.poll() is None  # reconnected instead of exiting
            output = server.manage("shell", "-c", RUNS).stdout
            runs = [line.split()[1:] for line in output.splitlines() if line.startswith("RUN ")]
            assert sorted(runs) == [["before", "success"], ["during", "success"]]
    finally:
        redis_process.terminate()
        redis_process.wait(timeout=30)


async def test_a_stored_final_that_cannot_be_read_does_not_stop_the_others(
    job_stream, user
) -> None:
    from channels.testing import WebsocketCommunicator

    from enrichment.consumers import EnrichConsumer

    communicator = WebsocketCommunicator(EnrichConsumer.as_asgi(), "/ws/enrich/")
    communicator.scope["user"] = user
    assert (await communicator.connect())[0]
    for request_id in ("broken", "fine"):
        await communicator.send_json_to(
            {"type": "enrich", "id": request_id, "message": {"body": request_id}}
        )
    names = jobqueue.keys()
    jobs = {fields["id"]: fields["job"] for fields in await waiting_jobs(job_stream, 2)}
    job_stream.set(names.final(jobs["broken"]), "{not json")  # a corrupt stored final
    await asyncio.sleep(1.5)  # a poll fails on it
    job_stream.delete(names.final(jobs["broken"]))
    frame = {"type": "error", "id": "fine", "error": "stored"}
    job_stream.set(names.final(jobs["fine"]), json.dumps(frame))
    assert await communicator.receive_json_from(timeout=10) == frame  # still watched
    await communicator.disconnect()
