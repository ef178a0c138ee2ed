"""WebSocket plumbing shared by every consumer: authentication and JSON frames."""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

CLOSE_UNAUTHENTICATED = 4401


class AuthenticatedJsonConsumer(AsyncJsonWebsocketConsumer):
    """Accepts only logged-in users; anonymous sockets are closed with 4401."""

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


class PingConsumer(AuthenticatedJsonConsumer):
    """``/ws/ping/``: the smallest authenticated socket, answers every frame with a pong."""

    async def on_authenticated(self) -> None:
        await self.send_json({"type": "hello", "user": self.scope["user"].get_username()})

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        await self.send_json({"type": "pong", "echo": content})
