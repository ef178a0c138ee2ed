"""Request-body limits enforced before Django reads a byte, and bodies fed to Django lazily.

Every HTTP request has a body limit chosen by method and path (a ``limit_for`` function the
project passes in: ``controlui.request_limits.body_limit_for``). A body over its limit is
answered ``413`` with a message naming the limit, JSON under ``/api/`` and a small HTML page
elsewhere, and the application never runs::

    POST /login/  Content-Length: 419430400
    -> 413 <p>Request body too large: POST /login/ accepts at most 5 MiB (5242880 bytes).</p>

Under daphne the limit is checked while Twisted receives the body (``daphne_body``): a
declared ``Content-Length`` over the limit is refused before the body is read, and a chunked
body is cut off the moment it passes the limit; nothing above the limit is kept. Daphne would
then hand the whole spooled body to the application queue at once (hundreds of MiB in
memory); instead the application gets the spool file itself: ``SpooledBodyASGIHandler`` (the
project's Django handler) makes it the request's stream without copying a byte on the event
loop, so a multipart body is parsed from that file by Django's upload handlers in the view's
thread. Any other application gets the file in 64 KiB chunks from ``RequestBodyLimit``.

Under another ASGI server (tests, uvicorn) the middleware enforces the same limits itself.
"""

from __future__ import annotations

import html
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import IO, Any

from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MIB = 1024 * 1024
CHUNK_BYTES = 64 * 1024
LimitFor = Callable[[str, str], int]


def describe_limit(limit: int) -> str:
    """``5242880`` -> ``"5 MiB (5242880 bytes)"``; below 1 MiB only the bytes."""
    if limit >= MIB:
        return f"{limit / MIB:g} MiB ({limit} bytes)"
    return f"{limit} bytes"


def too_large_response(method: str, path: str, limit: int) -> tuple[str, bytes]:
    """(content type, body) of the 413 answer naming the limit."""
    message = (
        f"Request body too large: {method.upper()} {path} accepts at most {describe_limit(limit)}."
    )
    if path.startswith("/api/"):
        return "application/json", json.dumps({"detail": message}).encode()
    page = (
        "<!doctype html><html><head><title>413 Request body too large</title></head>"
        f"<body><h1>Request body too large</h1><p>{html.escape(message)}</p></body></html>"
    )
    return "text/html; charset=utf-8", page.encode()


class SpooledBody(bytes):
    """An empty ``bytes`` standing for a body spooled to a file by the server.

    ``daphne_body`` puts one of these in the single ``http.request`` message instead of the
    whole body; ``RequestBodyLimit`` replaces it with the file's chunks as they are asked for.
    """

    file: IO[bytes]

    def __new__(cls, file: IO[bytes]) -> SpooledBody:
        body = super().__new__(cls, b"")
        body.file = file
        return body


class RequestBodyLimit:
    """ASGI middleware around the HTTP application; see the module docstring."""

    def __init__(self, app: ASGIApp, limit_for: LimitFor):
        self.app = app
        self.limit_for = limit_for
        # The app takes the spool file itself (``SpooledBodyASGIHandler``): hand it over.
        self.passes_spool = bool(getattr(app, "reads_spooled_body", False))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path = scope["method"], scope["path"]
        limit = self.limit_for(method, path)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _send_too_large(send, method, path, limit)
            return
        state = _BodyState(receive, limit, passes_spool=self.passes_spool)
        await self.app(scope, state.receive, state.guarded_send(send))
        if state.exceeded and not state.response_started:
            await _send_too_large(send, method, path, limit)


class _BodyState:
    def __init__(self, receive: Receive, limit: int, *, passes_spool: bool = False) -> None:
        self._receive = receive
        self._passes_spool = passes_spool
        self._limit = limit
        self._received = 0
        self._spool: IO[bytes] | None = None
        self.exceeded = False
        self.response_started = False

    async def receive(self) -> Message:
        if self.exceeded:
            return {"type": "http.disconnect"}
        if self._spool is not None:
            return self._next_spooled_chunk(self._spool)
        message = await self._receive()
        if message["type"] != "http.request":
            return message
        body = message.get("body", b"")
        if isinstance(body, SpooledBody):
            if self._passes_spool:
                return message
            self._spool = body.file
            return self._next_spooled_chunk(self._spool)
        self._received += len(body)
        if self._received > self._limit:
            # Django then stops (RequestAborted) and the 413 is sent after it returns.
            self.exceeded = True
            return {"type": "http.disconnect"}
        return message

    def _next_spooled_chunk(self, spool: IO[bytes]) -> Message:
        try:
            chunk = spool.read(CHUNK_BYTES)
        except ValueError:  # the server closed the spool: the client went away
            self._spool = None
            return {"type": "http.disconnect"}
        more = len(chunk) == CHUNK_BYTES
        if not more:
            # Back to the server's queue, which says when the client goes away.
            self._spool = None
        return {"type": "http.request", "body": chunk, "more_body": more}

    def guarded_send(self, send: Send) -> Send:
        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.response_started = True
            await send(message)

        return guarded


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _send_too_large(send: Send, method: str, path: str, limit: int) -> None:
    content_type, body = too_large_response(method, path, limit)
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", content_type.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class SpooledBodyASGIHandler(ASGIHandler):
    """Django's ASGI handler, taking a body the server spooled to a file as the request stream.

    Django's own ``read_body`` copies every body into a new temporary file on the event loop;
    for a spooled upload of hundreds of MiB that stalls every other request for seconds. Here
    the spool file becomes the stream as it is, and the multipart parse happens in the view's
    thread when it reads ``request.FILES``.
    """

    reads_spooled_body = True

    async def read_body(self, receive: Callable[[], Awaitable[Any]]) -> IO[bytes]:
        message = await receive()
        body = message.get("body", b"")
        if message["type"] == "http.request" and isinstance(body, SpooledBody):
            body.file.seek(0)
            return body.file
        if message["type"] == "http.disconnect":
            raise RequestAborted()
        return await super().read_body(_replay(message, receive))


def _replay(first: Message, receive: Callable[[], Awaitable[Any]]) -> Receive:
    """``receive`` that answers ``first`` once, then asks the server."""
    pending = [first]

    async def replayed() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replayed
