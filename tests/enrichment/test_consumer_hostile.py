"""Hostile frames on ``/ws/enrich/`` get an error frame and the socket stays open (issue 17, item 11)."""

from __future__ import annotations

import json

import pytest

from common.json_guard import MAX_JSON_DEPTH
from enrichment.models import Run
from tests.enrichment.test_consumers import connected, enrich_frame, frames_until_results

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("in_memory_layer")]


async def answered_then_still_open(communicator, text: str) -> dict:
    await communicator.send_to(text_data=text)
    frame = await communicator.receive_json_from(timeout=5)
    await communicator.send_json_to(enrich_frame("after", "no links here"))
    frames = await frames_until_results(communicator, {"after"})
    assert frames[-1]["type"] == "result"
    return frame


def deep_frame(depth: int) -> str:
    return '{"type":"enrich","id":"deep","message":' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("depth", [900, 400_000], ids=["depth-900", "depth-400000"])
async def test_deeply_nested_frame_under_1_mib_gets_an_error_frame(user, summarizer, depth) -> None:
    text = deep_frame(depth)
    assert len(text) < 1024 * 1024
    communicator = await connected(user)
    frame = await answered_then_still_open(communicator, text)
    assert frame["type"] == "error"
    assert f"nested deeper than {MAX_JSON_DEPTH} levels" in frame["error"]
    await communicator.disconnect()


async def test_lone_surrogate_id_gets_an_error_frame_without_echoing_it(user, summarizer) -> None:
    communicator = await connected(user)
    frame = await answered_then_still_open(
        communicator, '{"type":"enrich","id":"\\udc00","message":{"body":"hi"}}'
    )
    assert frame == {
        "type": "error",
        "id": None,
        "error": "id: contains a lone surrogate (U+DC00), which is not valid Unicode",
    }
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"body": "a\x00b"}, "message.body: contains a NUL character (U+0000)"),
        (
            {"body": "hi", "channel": "\ud800"},
            "message.channel: contains a lone surrogate (U+D800)",
        ),
    ],
    ids=["nul-body", "surrogate-channel"],
)
async def test_unstorable_text_in_a_message_is_named_and_nothing_runs(
    user, summarizer, message, error
) -> None:
    communicator = await connected(user)
    frame = await answered_then_still_open(
        communicator, json.dumps({"type": "enrich", "id": "r1", "message": message})
    )
    assert frame["type"] == "error" and frame["id"] == "r1"
    assert frame["error"].startswith(error)
    assert await Run.objects.acount() == 1  # only the good request after it ran
    await communicator.disconnect()
