"""WebSocket plumbing shared by every consumer: authentication and JSON frames."""

from __future__ import annotations

from typing import Any, ClassVar

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer

CLOSE_UNAUTHENTICATED = 4401


class AuthenticatedJsonConsumer(AsyncJsonWebsocketConsumer):
    """Accepts only logged-in users; anonymous sockets are closed with 4401."""

    # WebSocket events whose handler reaches the database only through functions that call
    # ``plumbing.connections.close_stale_connections`` themselves, in the same hop.
    checks_own_connections: ClassVar[frozenset[str]] = frozenset()

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            # Accept first so the client sees our close code instead of a handshake failure.
            await self.accept()
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        await self.accept()
        await self.on_authenticated()

    async def on_authenticated(self) -> None:
        """Hook for subclasses (join groups, send a hello)."""

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch, without its database check before a relayed message.

        Channels (4.2+) closes stale database connections before every event, a hop to the
        sync thread each time: three per answer on ``/ws/enrich/`` with Redis (the frame
        received, the worker's progress and its result). Messages from the channel layer
        only relay frames to the browser and never touch the database, so they skip it;
        WebSocket events (connect, receive, disconnect) keep it unless the consumer names them
        in ``checks_own_connections``.
        """
        kind = message["type"]
        if kind.startswith("websocket.") and kind not in self.checks_own_connections:
            await super().dispatch(message)
            return
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)


class PingConsumer(AuthenticatedJsonConsumer):
    """``/ws/ping/``: the smallest authenticated socket, answers every frame with a pong."""

    async def on_authenticated(self) -> None:
        await self.send_json({"type": "hello", "user": self.scope["user"].get_username()})

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        await self.send_json({"type": "pong", "echo": content})
