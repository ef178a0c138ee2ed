"""HTTP and WebSocket traffic for ``/metrics``, counted where daphne hands a request over.

An ASGI middleware around the whole application: for HTTP, one count by method, route and
status and one duration (arrival to the last body chunk sent); for WebSocket, connections,
open sockets and frames in each direction. Routes are URL patterns (``decisions/<int:run_id>/``),
never raw paths, so the label set stays small; ``route_of`` comes from the shell, which knows
the URL configuration.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from common import metrics

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Application = Callable[[Scope, Receive, Send], Awaitable[None]]
RouteOf = Callable[[str, str], str]  # (scope type, path) -> route

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class RequestMetrics:
    def __init__(self, app: Application, route_of: RouteOf) -> None:
        self.app = app
        self.route_of = route_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        status = 500  # what the client gets when the application raises before answering

        async def counted_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counted_send)
        finally:
            method = scope.get("method", "")
            method = method if method in METHODS else "other"
            route = metrics.route_label(self.route_of("http", scope.get("path", "")))
            metrics.HTTP_REQUESTS.labels(method=method, route=route, status=str(status)).inc()
            metrics.HTTP_SECONDS.labels(method=method, route=route).observe(
                time.perf_counter() - started
            )

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = metrics.route_label(self.route_of("websocket", scope.get("path", "")))
        frames_in = metrics.WEBSOCKET_MESSAGES.labels(route=route, direction="in")
        frames_out = metrics.WEBSOCKET_MESSAGES.labels(route=route, direction="out")
        open_now = metrics.WEBSOCKET_OPEN.labels(route=route)
        accepted = False

        async def counted_receive() -> Message:
            message = await receive()
            if message["type"] == "websocket.receive":
                frames_in.inc()
            return message

        async def counted_send(message: Message) -> None:
            nonlocal accepted
            if message["type"] == "websocket.accept" and not accepted:
                accepted = True
                metrics.WEBSOCKET_CONNECTIONS.labels(route=route).inc()
                open_now.inc()
            elif message["type"] == "websocket.send":
                frames_out.inc()
            await send(message)

        try:
            await self.app(scope, counted_receive, counted_send)
        finally:
            if accepted:
                open_now.dec()
