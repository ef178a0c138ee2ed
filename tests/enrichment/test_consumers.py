"""``/ws/enrich/`` and ``/ws/decisions/`` through Channels' in-process communicator (SPEC §10)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from common.consumers import CLOSE_UNAUTHENTICATED
from enrichment.consumers import MAX_FRAME_BYTES, DecisionsConsumer, EnrichConsumer
from enrichment.models import Run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("in_memory_layer")]


async def connected(user: Any, consumer: Any = EnrichConsumer, path: str = "/ws/enrich/"):
    communicator = WebsocketCommunicator(consumer.as_asgi(), path)
    communicator.scope["user"] = user
    connected_ok, _ = await communicator.connect()
    assert connected_ok
    return communicator


async def frames_until_results(communicator, ids: set[str], timeout: float = 20) -> list[dict]:
    """Every frame received until each id in ``ids`` has its result or error frame."""
    frames: list[dict] = []
    open_ids = set(ids)
    while open_ids:
        frame = await communicator.receive_json_from(timeout=timeout)
        frames.append(frame)
        if frame["type"] in ("result", "error"):
            open_ids.discard(frame["id"])
    return frames


def enrich_frame(request_id: Any, body: str, **extra: Any) -> dict[str, Any]:
    return {"type": "enrich", "id": request_id, "message": {"body": body, **extra}}


async def test_concurrent_requests_on_one_socket_keep_their_ids_apart(user, summarizer) -> None:
    communicator = await connected(user)
    bodies = {
        "a": "first http://127.0.0.1/slow",
        "b": "second http://127.0.0.1/b/slow",
        "c": "third http://127.0.0.1/c",
    }
    loop = asyncio.get_running_loop()
    started = loop.time()
    for request_id, body in bodies.items():
        await communicator.send_json_to(enrich_frame(request_id, body))
    frames = await frames_until_results(communicator, set(bodies))
    elapsed = loop.time() - started

    results = {frame["id"]: frame for frame in frames if frame["type"] == "result"}
    assert set(results) == set(bodies)
    for request_id, body in bodies.items():
        url = body.split()[-1]
        assert results[request_id]["body"].startswith(body)
        assert f"Summary of {url}" in results[request_id]["body"]
        assert [u["url"] for u in results[request_id]["links"]["urls"]] == [url]
    # "c" has no slow link: it finishes while the two slow ones are still running.
    order = [frame["id"] for frame in frames if frame["type"] == "result"]
    assert order[0] == "c"
    # Two 1 s summaries ran concurrently, not one after the other.
    assert elapsed < 1.9 + 3  # generous: interpreter start-up of the CLI on a loaded machine
    run_ids = {results[i]["runId"] for i in bodies}
    assert len(run_ids) == 3
    assert await Run.objects.filter(pk__in=run_ids, outcome="success").acount() == 3
    await communicator.disconnect()


async def test_progress_frames_come_before_the_result(user, summarizer, settings) -> None:
    settings.PROGRESS_AFTER_MS = 0  # every frame at once
    communicator = await connected(user)
    await communicator.send_json_to(
        enrich_frame("p1", "two links http://127.0.0.1/x http://127.0.0.1/y")
    )
    frames = await frames_until_results(communicator, {"p1"})
    kinds = [frame["type"] for frame in frames]
    assert kinds[-1] == "result"
    progress = [frame for frame in frames if frame["type"] == "progress"]
    assert progress, kinds
    assert all(frame["id"] == "p1" and frame["stage"] == "links" for frame in progress)
    assert {frame["url"] for frame in progress} <= {"http://127.0.0.1/x", "http://127.0.0.1/y"}
    assert all(isinstance(frame["text"], str) and frame["text"] for frame in progress)
    await communicator.disconnect()


async def test_a_quick_run_answers_with_its_result_alone(user, summarizer, settings) -> None:
    settings.PROGRESS_AFTER_MS = 30_000  # far longer than the summarizer takes
    communicator = await connected(user)
    await communicator.send_json_to(enrich_frame("q", "see http://127.0.0.1/q"))
    frames = await frames_until_results(communicator, {"q"})
    assert [frame["type"] for frame in frames] == ["result"]
    assert "Summary of http://127.0.0.1/q" in frames[0]["body"]
    await communicator.disconnect()


async def test_a_long_run_sends_its_held_progress_before_the_result(
    user, summarizer, settings
) -> None:
    settings.PROGRESS_AFTER_MS = 200  # the /slow summary takes a second
    communicator = await connected(user)
    await communicator.send_json_to(enrich_frame("s", "see http://127.0.0.1/slow"))
    frames = await frames_until_results(communicator, {"s"})
    assert [frame["type"] for frame in frames] == ["progress", "result"]
    assert frames[0]["url"] == "http://127.0.0.1/slow"
    assert frames[0]["text"].startswith("Running ")
    await communicator.disconnect()


MALFORMED = [
    ("{not json", None, "malformed JSON"),
    ("[1, 2]", None, "frame must be a JSON object"),
    (json.dumps({"type": "enrich", "message": {"body": "x"}}), None, "id: required"),
    (json.dumps(enrich_frame("", "x")), None, "id: required"),
    (json.dumps(enrich_frame(7, "x")), None, "id: required"),
    (json.dumps({"type": "subscribe", "id": "t1"}), "t1", "unknown frame type 'subscribe'"),
    (json.dumps({"id": "t2", "message": {"body": "x"}}), "t2", "unknown frame type None"),
    (json.dumps({"type": "enrich", "id": "m1"}), "m1", "message"),
    (json.dumps(enrich_frame("m2", 5)), "m2", "message.body"),
    (json.dumps(enrich_frame("m3", "x", chatType="y" * 50)), "m3", "message.chatType"),
    (json.dumps(enrich_frame("m4", "x", attachments="nope")), "m4", "message.attachments"),
]


@pytest.mark.parametrize(
    ("text", "request_id", "error"),
    MALFORMED,
    ids=[
        "not-json",
        "not-object",
        "missing-id",
        "empty-id",
        "numeric-id",
        "unknown-type",
        "missing-type",
        "missing-message",
        "body-not-string",
        "chat-type-too-long",
        "attachments-not-list",
    ],
)
async def test_malformed_frames_get_an_error_and_the_socket_stays_open(
    user, summarizer, text, request_id, error
) -> None:
    communicator = await connected(user)
    await communicator.send_to(text_data=text)
    frame = await communicator.receive_json_from(timeout=5)
    assert frame["type"] == "error"
    assert frame["id"] == request_id
    assert error in frame["error"]
    # Still open: a good request on the same socket is answered.
    await communicator.send_json_to(enrich_frame("after", "no links here"))
    frames = await frames_until_results(communicator, {"after"})
    assert frames[-1]["type"] == "result"
    assert frames[-1]["links"]["outcome"] == "no-links"
    await communicator.disconnect()


async def test_oversized_frame_is_refused_with_the_limit_and_socket_stays_open(
    user, summarizer
) -> None:
    communicator = await connected(user)
    await communicator.send_to(text_data=json.dumps(enrich_frame("big", "x" * MAX_FRAME_BYTES)))
    frame = await communicator.receive_json_from(timeout=5)
    assert frame == {
        "type": "error",
        "id": None,
        "error": "frame too large (limit 1048576 bytes)",
    }
    assert MAX_FRAME_BYTES == 1024 * 1024
    await communicator.send_json_to(enrich_frame("small", "hello"))
    frames = await frames_until_results(communicator, {"small"})
    assert frames[-1]["type"] == "result"
    await communicator.disconnect()


async def test_binary_frame_gets_an_error(user) -> None:
    communicator = await connected(user)
    await communicator.send_to(bytes_data=b"\x00\x01")
    frame = await communicator.receive_json_from(timeout=5)
    assert frame["type"] == "error"
    assert "binary frames" in frame["error"]
    await communicator.disconnect()


async def test_duplicate_in_flight_id_is_refused(user, summarizer) -> None:
    communicator = await connected(user)
    await communicator.send_json_to(enrich_frame("dup", "http://127.0.0.1/slow"))
    await communicator.send_json_to(enrich_frame("dup", "again"))
    first = await communicator.receive_json_from(timeout=5)
    while first["type"] == "progress":
        first = await communicator.receive_json_from(timeout=5)
    assert first == {
        "type": "error",
        "id": "dup",
        "error": "id: a request with this id is already in flight",
    }
    frames = await frames_until_results(communicator, {"dup"})
    assert frames[-1]["type"] == "result"
    # Once answered, the id may be used again.
    await communicator.send_json_to(enrich_frame("dup", "plain"))
    frames = await frames_until_results(communicator, {"dup"})
    assert frames[-1]["type"] == "result"
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("consumer", "path"),
    [(EnrichConsumer, "/ws/enrich/"), (DecisionsConsumer, "/ws/decisions/")],
    ids=["enrich", "decisions"],
)
async def test_anonymous_socket_is_closed_with_4401(consumer, path) -> None:
    communicator = WebsocketCommunicator(consumer.as_asgi(), path)
    communicator.scope["user"] = AnonymousUser()
    await communicator.connect()
    output = await communicator.receive_output(timeout=5)
    assert output == {"type": "websocket.close", "code": CLOSE_UNAUTHENTICATED}
    assert CLOSE_UNAUTHENTICATED == 4401


async def test_decisions_socket_receives_each_recorded_run(user, summarizer) -> None:
    feed = await connected(user, DecisionsConsumer, "/ws/decisions/")
    communicator = await connected(user)
    await communicator.send_json_to(
        enrich_frame("d1", "http://127.0.0.1/z", channel="telegram", chatType="group")
    )
    result = (await frames_until_results(communicator, {"d1"}))[-1]
    pushed = await feed.receive_json_from(timeout=5)
    assert pushed["type"] == "decision"
    assert pushed["run"]["runId"] == result["runId"]
    assert pushed["run"]["outcome"] == "success"
    assert pushed["run"]["channel"] == "telegram"
    assert pushed["run"]["chatType"] == "group"
    assert pushed["run"]["urlCount"] == 1
    # The feed only pushes; anything sent to it gets an error and it stays open.
    await feed.send_json_to({"type": "hello"})
    assert (await feed.receive_json_from(timeout=5))["type"] == "error"
    await communicator.disconnect()
    await feed.disconnect()


async def test_decisions_socket_stops_receiving_after_disconnect(user, summarizer) -> None:
    from channels.layers import get_channel_layer

    feed = await connected(user, DecisionsConsumer, "/ws/decisions/")
    await feed.disconnect()
    layer = get_channel_layer()
    # The group is empty again: nothing is left behind to receive broadcasts.
    assert not layer.groups.get("decisions")


async def test_disconnect_mid_run_closes_the_run_instead_of_leaving_it_running(
    user, summarizer
) -> None:
    communicator = await connected(user)
    await communicator.send_json_to(enrich_frame("gone", "bye http://127.0.0.1/slow"))
    progress = await communicator.receive_json_from(timeout=5)
    assert progress["type"] == "progress"
    await asyncio.sleep(0.2)  # the slow summarizer is now running
    await communicator.disconnect()
    run = await Run.objects.aget()
    assert run.outcome == "interrupted"
    assert run.finished_at is not None
    assert "disconnected" in run.error
