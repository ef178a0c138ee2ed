"""``RequestBodyLimit`` under any ASGI server (the daphne path is in test_body_limits_live)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from controlui.request_limits import body_limit_for
from server.body_limits import (
    RequestBodyLimit,
    SpooledBody,
    describe_limit,
    too_large_response,
)

Message = dict[str, Any]


class Recorder:
    """An application that reads the whole body, then answers 200 with its length."""

    def __init__(self) -> None:
        self.called = False
        self.body = b""
        self.saw_disconnect = False
        self.chunks: list[int] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.called = True
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.saw_disconnect = True
                return
            self.body += message.get("body", b"")
            self.chunks.append(len(message.get("body", b"")))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(len(self.body)).encode()})


async def call(
    messages: list[Message], *, path: str = "/api/x", headers: list[Any] | None = None
) -> tuple[Recorder, list[Message]]:
    app = Recorder()
    sent: list[Message] = []
    queue = list(messages)

    async def receive() -> Message:
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": path, "headers": headers or []}
    await RequestBodyLimit(app, limit_for=lambda method, path: 100)(scope, receive, send)
    return app, sent


async def test_declared_length_over_the_limit_never_reaches_the_app() -> None:
    app, sent = await call([], headers=[(b"content-length", b"101")])
    assert not app.called
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"]) == {
        "detail": "Request body too large: POST /api/x accepts at most 100 bytes."
    }


async def test_streamed_body_passing_the_limit_is_cut_off_with_413() -> None:
    chunks = [{"type": "http.request", "body": b"x" * 60, "more_body": True}] * 3
    app, sent = await call(chunks)
    assert app.saw_disconnect and len(app.body) == 60
    assert sent[0]["status"] == 413


async def test_body_at_the_limit_passes_whole() -> None:
    app, sent = await call(
        [
            {"type": "http.request", "body": b"x" * 60, "more_body": True},
            {"type": "http.request", "body": b"y" * 40, "more_body": False},
        ],
        headers=[(b"content-length", b"100")],
    )
    assert app.body == b"x" * 60 + b"y" * 40 and sent[0]["status"] == 200


async def test_spooled_body_is_read_from_its_file_in_chunks() -> None:
    payload = bytes(range(256)) * 1000  # 256000 bytes: three full 64 KiB chunks and a rest
    spool = io.BytesIO(payload)
    app = Recorder()
    sent: list[Message] = []
    queue: list[Message] = [{"type": "http.request", "body": SpooledBody(spool)}]

    async def receive() -> Message:
        return queue.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/x", "headers": []}
    await RequestBodyLimit(app, limit_for=lambda method, path: 10**9)(scope, receive, send)
    assert app.body == payload and sent[0]["status"] == 200
    assert app.chunks == [65536, 65536, 65536, 256000 - 3 * 65536]


@pytest.mark.parametrize(
    ("method", "path", "limit"),
    [
        ("POST", "/login/", 5 * 1024 * 1024),
        ("POST", "/api/files/extract", 6 * 1024 * 1024),
        ("GET", "/api/files/extract", 5 * 1024 * 1024),
        ("POST", "/api/enrich/upload", 201 * 1024 * 1024),
        ("PUT", "/api/config", 5 * 1024 * 1024),
    ],
    ids=["login", "file-extract", "file-extract-get", "enrich-upload", "config"],
)
def test_limits_per_endpoint(method: str, path: str, limit: int) -> None:
    assert body_limit_for(method, path) == limit


def test_html_answer_escapes_the_path() -> None:
    content_type, body = too_large_response("post", "/<script>/", 2048)
    assert content_type.startswith("text/html")
    assert b"<script>" not in body and b"&lt;script&gt;" in body
    assert b"accepts at most 2048 bytes" in body
    assert describe_limit(5 * 1024 * 1024) == "5 MiB (5242880 bytes)"


async def test_spooled_body_is_handed_over_whole_to_a_handler_that_reads_it() -> None:
    spool = io.BytesIO(b"x" * 200_000)
    queue: list[Message] = [{"type": "http.request", "body": SpooledBody(spool)}]
    seen: list[Message] = []

    async def receive() -> Message:
        return queue.pop(0)

    async def app(scope, receive, send) -> None:
        seen.append(await receive())

    app.reads_spooled_body = True  # type: ignore[attr-defined]
    await RequestBodyLimit(app, limit_for=lambda method, path: 10**9)(
        {"type": "http", "method": "POST", "path": "/x", "headers": []}, receive, None
    )
    assert isinstance(seen[0]["body"], SpooledBody) and seen[0]["body"].file is spool


@pytest.mark.parametrize(
    ("method", "path", "need"),
    [
        ("GET", "/api/messages", "none"),
        ("POST", "/login/", "none"),
        ("POST", "/decisions/views/", "none"),
        ("POST", "/api/enrich", "present"),
        ("PUT", "/api/config", "present"),
        ("POST", "/api/enrich/upload", "verified"),
        ("POST", "/api/files/extract", "verified"),
    ],
)
def test_credentials_asked_before_the_body_per_route(method: str, path: str, need: str) -> None:
    from controlui.request_limits import credential_need_for

    assert credential_need_for(method, path) == need
