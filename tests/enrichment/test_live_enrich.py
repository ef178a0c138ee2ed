"""``/ws/enrich/`` through the real daphne process (session ``live`` server, in-memory layer)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
import websockets

pytestmark = pytest.mark.slow

STORE_SUMMARIZER = """
import json
from enrichment.config.store import config_document
from enrichment.config.changes import config_replace
from tests.enrichment.conftest import summarizer_config
print(json.dumps(config_document()))
config_replace(document=summarizer_config())
"""

RESTORE = """
import json, sys
from enrichment.config.changes import config_replace
config_replace(document=json.loads({document!r}))
"""


@pytest.fixture(scope="module")
def live_summarizer(live) -> Iterator[Any]:
    """The live server's stored config points at the test summarizer (restored afterwards)."""
    previous = live.manage("shell", "-c", STORE_SUMMARIZER).stdout.strip().splitlines()[-1]
    yield live
    live.manage("shell", "-c", RESTORE.format(document=previous))


async def open_socket(live: Any) -> Any:
    return await websockets.connect(
        live.ws_url + "/ws/enrich/",
        origin=live.base_url,
        additional_headers={"Cookie": live.cookie_header()},
    )


async def receive_until(socket: Any, ids: set[str], timeout: float = 30) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    pending = set(ids)
    while pending:
        frame = json.loads(await asyncio.wait_for(socket.recv(), timeout=timeout))
        frames.append(frame)
        if frame["type"] in ("result", "error"):
            pending.discard(frame["id"])
    return frames


async def test_concurrent_requests_on_one_socket(live_summarizer) -> None:
    socket = await open_socket(live_summarizer)
    try:
        requests = {
            "r1": "one http://127.0.0.1/1/slow",
            "r2": "two http://127.0.0.1/2/slow",
            "r3": "three http://127.0.0.1/3/slow",
        }
        started = asyncio.get_running_loop().time()
        for request_id, body in requests.items():
            await socket.send(
                json.dumps({"type": "enrich", "id": request_id, "message": {"body": body}})
            )
        frames = await receive_until(socket, set(requests))
        elapsed = asyncio.get_running_loop().time() - started
    finally:
        await socket.close()
    results = {frame["id"]: frame for frame in frames if frame["type"] == "result"}
    assert set(results) == set(requests)
    for request_id, body in requests.items():
        url = body.split()[-1]
        assert f"Summary of {url}" in results[request_id]["body"]
        assert results[request_id]["links"]["outcome"] == "success"
    assert len({result["runId"] for result in results.values()}) == 3
    # Three 1 s summaries overlapped (sequential would take over 3 s).
    assert elapsed < 3.0
    for request_id in requests:
        mine = [frame for frame in frames if frame["id"] == request_id]
        assert [frame["type"] for frame in mine][-1] == "result"
        assert all(frame["type"] == "progress" for frame in mine[:-1])
        assert mine[:-1], "at least one progress frame before the result"


async def test_progress_then_result(live_summarizer) -> None:
    socket = await open_socket(live_summarizer)
    try:
        await socket.send(
            json.dumps(
                {"type": "enrich", "id": "p", "message": {"body": "see http://127.0.0.1/slow"}}
            )
        )
        frames = await receive_until(socket, {"p"})
    finally:
        await socket.close()
    assert [frame["type"] for frame in frames] == ["progress"] * (len(frames) - 1) + ["result"]
    assert frames[0]["stage"] == "links" and frames[0]["url"] == "http://127.0.0.1/slow"
    assert "Summary of http://127.0.0.1/slow" in frames[-1]["body"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{oops", "malformed JSON"),
        (json.dumps({"type": "enrich", "message": {"body": "x"}}), "id: required"),
        (json.dumps({"type": "nope", "id": "u"}), "unknown frame type 'nope'"),
        (json.dumps({"type": "enrich", "id": "v", "message": {"body": 1}}), "message.body"),
        (
            json.dumps({"type": "enrich", "id": "w", "message": {"body": "x" * 1_100_000}}),
            "frame too large (limit 1048576 bytes)",
        ),
    ],
    ids=["not-json", "no-id", "unknown-type", "bad-field", "oversized"],
)
async def test_malformed_frames_keep_the_socket_open(live_summarizer, text, expected) -> None:
    socket = await open_socket(live_summarizer)
    try:
        await socket.send(text)
        error = json.loads(await asyncio.wait_for(socket.recv(), timeout=10))
        assert error["type"] == "error"
        assert expected in error["error"]
        await socket.send(json.dumps({"type": "enrich", "id": "ok", "message": {"body": "hi"}}))
        frames = await receive_until(socket, {"ok"})
        assert frames[-1]["type"] == "result"
        assert frames[-1]["links"]["outcome"] == "no-links"
    finally:
        await socket.close()


async def test_anonymous_enrich_socket_closed_with_4401(live) -> None:
    async with websockets.connect(live.ws_url + "/ws/enrich/", origin=live.base_url) as socket:
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(socket.recv(), timeout=10)
    assert closed.value.rcvd.code == 4401
