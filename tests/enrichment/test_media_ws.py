"""Attachments on ``/ws/enrich/``: base64 data, media progress frames, the 25 MiB frame limit."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from enrichment.config.changes import config_replace
from enrichment.consumers import MAX_ATTACHMENT_FRAME_BYTES, MAX_FRAME_BYTES, EnrichConsumer
from enrichment.models import Run
from tests.enrichment.services import test_media as service_tests
from tests.enrichment.services.test_media import WAV, FakeServer, document, leftovers

# The service tests' fixtures: own MEDIA_ROOT and temp dir, the local server, the fake whisper.
isolated = service_tests.isolated
server = service_tests.server
whisper_config = service_tests.whisper_config

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("in_memory_layer")]


async def connected(user: Any) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(EnrichConsumer.as_asgi(), "/ws/enrich/")
    communicator.scope["user"] = user
    ok, _ = await communicator.connect()
    assert ok
    return communicator


async def frames_until_result(communicator: WebsocketCommunicator, request_id: str) -> list[dict]:
    frames = []
    while True:
        frame = await communicator.receive_json_from(timeout=20)
        frames.append(frame)
        if frame["type"] in ("result", "error") and frame["id"] == request_id:
            return frames


def data_frame(request_id: str, body: str, data: bytes, **attachment: Any) -> dict[str, Any]:
    item = {"name": "note.wav", "mime": "audio/wav", **attachment}
    item["data"] = base64.b64encode(data).decode()
    return {"type": "enrich", "id": request_id, "message": {"body": body, "attachments": [item]}}


async def test_base64_attachment_is_transcribed_with_media_progress(
    user, whisper_config, isolated, settings
) -> None:
    settings.PROGRESS_AFTER_MS = 0  # every frame at once
    communicator = await connected(user)
    await communicator.send_json_to(data_frame("v1", "what did she say?", WAV))
    frames = await frames_until_result(communicator, "v1")
    progress, result = frames[:-1], frames[-1]
    assert progress == [
        {
            "type": "progress",
            "id": "v1",
            "stage": "media",
            "capability": "audio",
            "attachmentIndex": 0,
            "text": "Transcribing audio attachment 1...",
        }
    ]
    assert result["type"] == "result"
    transcript = f"whisper-cli heard attachment-1-note.wav ({len(WAV)} bytes)"
    assert result["body"] == f"[Audio]\nUser text:\nwhat did she say?\nTranscript:\n{transcript}"
    audio = next(r for r in result["media"] if r["capability"] == "audio")
    assert audio["outcome"] == "success"
    run = await Run.objects.aget(pk=result["runId"])
    assert run.media == result["media"]
    assert leftovers(isolated) == []
    await communicator.disconnect()


async def test_media_progress_comes_before_link_progress(
    user, server, monkeypatch, settings
) -> None:
    settings.PROGRESS_AFTER_MS = 0  # every frame at once
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    spoken = server.base + "/menu"
    monkeypatch.setattr(FakeServer, "transcript", f"see {spoken}")
    entry = {"provider": "openai", "model": "whisper-1", "baseUrl": server.base + "/v1"}
    await sync_to_async(config_replace)(document=document({"audio": {"models": [entry]}}))
    communicator = await connected(user)
    await communicator.send_json_to(data_frame("o1", "", WAV))
    frames = await frames_until_result(communicator, "o1")
    stages = [frame["stage"] for frame in frames if frame["type"] == "progress"]
    assert stages[0] == "media" and "links" in stages
    assert stages.index("links") > stages.index("media")
    assert f"Summary of {spoken}" in frames[-1]["body"]
    await communicator.disconnect()


async def test_frame_over_1_mib_is_accepted_when_it_carries_attachment_data(
    user, whisper_config
) -> None:
    big_wav = WAV + bytes(2 * 1024 * 1024)
    frame = data_frame("big", "long one", big_wav)
    assert len(json.dumps(frame)) > MAX_FRAME_BYTES
    communicator = await connected(user)
    await communicator.send_json_to(frame)
    frames = await frames_until_result(communicator, "big")
    assert frames[-1]["type"] == "result"
    assert f"({len(big_wav)} bytes)" in frames[-1]["body"]
    await communicator.disconnect()


async def test_frame_over_1_mib_without_attachment_data_keeps_the_1_mib_limit(
    user, whisper_config
) -> None:
    frame = data_frame("plain", "x" * MAX_FRAME_BYTES, b"")  # data "" carries nothing
    communicator = await connected(user)
    await communicator.send_json_to(frame)
    answer = await communicator.receive_json_from(timeout=5)
    assert answer == {"type": "error", "id": None, "error": "frame too large (limit 1048576 bytes)"}
    await communicator.disconnect()


async def test_frame_over_25_mib_is_refused_with_both_limits_and_the_socket_stays_open(
    user, whisper_config
) -> None:
    assert MAX_ATTACHMENT_FRAME_BYTES == 25 * 1024 * 1024
    frame = data_frame("huge", "x", bytes(MAX_ATTACHMENT_FRAME_BYTES // 4 * 3 + 3))
    communicator = await connected(user)
    await communicator.send_json_to(frame)
    answer = await communicator.receive_json_from(timeout=10)
    assert answer == {
        "type": "error",
        "id": None,
        "error": "frame too large (limit 26214400 bytes = 25 MiB for frames whose attachments "
        "carry base64 data, 1048576 bytes otherwise)",
    }
    await communicator.send_json_to(data_frame("after", "still open", WAV))
    frames = await frames_until_result(communicator, "after")
    assert frames[-1]["type"] == "result"
    assert not await Run.objects.filter(original_body="x").aexists()
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("attachment", "message"),
    [
        ({"data": "%%%"}, "message.attachments.0.data: Value error, not valid base64"),
        (
            {"data": "UklGRg==", "path": "a.wav"},
            "message.attachments.0: Value error, give either data or url/path, not both",
        ),
    ],
    ids=["bad-base64", "data-and-path"],
)
async def test_bad_attachment_data_gets_an_error_frame(
    user, whisper_config, attachment, message
) -> None:
    communicator = await connected(user)
    frame = {"type": "enrich", "id": "bad", "message": {"body": "x", "attachments": [attachment]}}
    await communicator.send_json_to(frame)
    answer = await communicator.receive_json_from(timeout=5)
    assert answer == {"type": "error", "id": "bad", "error": message}
    await communicator.disconnect()
