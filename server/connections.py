"""Connection guards in front of daphne: a header deadline, idle timeouts, a per-address cap.

Stock daphne keeps a connection open as long as the client sends a byte now and then (Twisted's
idle timeout restarts on every byte, and defaults to 12 hours): 900 "slowloris" connections
sending one header line every 10 s stayed open for as long as they were fed. ``install``
wraps daphne's HTTP factory so every connection, HTTP or WebSocket, is a
``GuardedConnection`` that

- must finish a request's headers within ``header_timeout`` of its first byte (of opening,
  for the first request): otherwise ``408`` and closed, however slowly it trickles;
- is closed after ``idle_timeout`` without a byte between two HTTP requests (keep-alive), and
  after ``websocket_idle_timeout`` without a byte once upgraded to a WebSocket (daphne pings
  every ``--ping-interval`` seconds, so a live browser answers long before);
- is refused with ``429`` when its address already holds ``max_per_client`` connections;
- once a WebSocket, gets a close frame with code 1009 and a reason naming the limit when a
  frame or message passes daphne's ``--websocket-max-frame-size`` /
  ``--websocket-max-message-size`` (autobahn would otherwise drop the TCP connection with no
  close code at all); the rest of that frame is read and dropped, never kept.

While a request is being answered none of these run: daphne's ``--http-timeout`` bounds the
application. Installed from ``controlui.asgi`` with the values of the settings
``HTTP_HEADER_TIMEOUT_SECONDS``, ``HTTP_IDLE_TIMEOUT_SECONDS``,
``WEBSOCKET_IDLE_TIMEOUT_SECONDS`` and ``MAX_CONNECTIONS_PER_CLIENT`` (0 turns the cap off).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from daphne import server as daphne_server
from daphne.ws_protocol import WebSocketFactory
from twisted.internet.base import DelayedCall
from twisted.internet.protocol import Protocol
from twisted.protocols.policies import ProtocolWrapper, WrappingFactory

_DAPHNE_HTTP_FACTORY = daphne_server.HTTPFactory
_DAPHNE_WS_FACTORY = WebSocketFactory
ABORT_AFTER_SECONDS = 2.0  # a peer that does not read our close is cut off this much later


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = 10.0
    idle_timeout: float = 60.0
    websocket_idle_timeout: float = 120.0
    max_per_client: int = 100  # 0 = no cap


def _call_later(seconds: float, then: Any) -> DelayedCall:
    # Imported here: the reactor is daphne's (asyncio), installed when daphne.server loads.
    from twisted.internet import reactor

    clock: Any = reactor
    return clock.callLater(seconds, then)


def _plain_response(status: str, message: str) -> bytes:
    body = (message + "\n").encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


class GuardedConnection(ProtocolWrapper):
    """One client connection: see the module docstring. States: ``headers`` (the deadline
    runs), ``busy`` (a request is being answered), ``idle`` (between requests),
    ``websocket``."""

    factory: GuardedFactory
    state = "headers"
    _timer: DelayedCall | None = None
    _abort: DelayedCall | None = None
    _started = False

    # Daphne hands an upgraded connection over by assigning ``wrappedProtocol``.
    @property
    def wrappedProtocol(self) -> Any:  # noqa: N802 (Twisted's name)
        return self.__dict__.get("_wrapped")

    @wrappedProtocol.setter
    def wrappedProtocol(self, protocol: Any) -> None:  # noqa: N802
        upgraded = self._started and protocol is not None and self.state != "closed"
        self.__dict__["_wrapped"] = protocol
        if upgraded:
            self.state = "websocket"
            self._arm(self.factory.limits.websocket_idle_timeout, self._idle_too_long)

    def makeConnection(self, transport: Any) -> None:  # noqa: N802
        self._started = True
        self._arm(self.factory.limits.header_timeout, self._headers_too_slow)
        super().makeConnection(transport)

    def dataReceived(self, data: bytes) -> None:  # noqa: N802
        if self.state == "idle":  # the next request begins: its headers have a deadline
            self.state = "headers"
            self._arm(self.factory.limits.header_timeout, self._headers_too_slow)
        elif self.state == "websocket":
            self._arm(self.factory.limits.websocket_idle_timeout, self._idle_too_long)
        super().dataReceived(data)

    # Called by the request (server.daphne_body).
    def headers_complete(self) -> None:
        if self.state == "headers":
            self.state = "busy"
            self._arm(None, None)

    def request_finished(self) -> None:
        if self.state in ("busy", "headers"):
            self.state = "idle"
            self._arm(self.factory.limits.idle_timeout, self._idle_too_long)

    def connectionLost(self, reason: Any = None) -> None:  # noqa: N802
        self.state = "closed"
        self._arm(None, None)
        if self._abort is not None and self._abort.active():
            self._abort.cancel()
        super().connectionLost(reason)

    def _arm(self, seconds: float | None, then: Any) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        if seconds and then is not None:
            self._timer = _call_later(seconds, then)

    def _headers_too_slow(self) -> None:
        limit = self.factory.limits.header_timeout
        self._close(
            _plain_response(
                "408 Request Timeout",
                f"Request headers not received within {limit:g} s; connection closed.",
            )
        )

    def _idle_too_long(self) -> None:
        self._close(b"")

    def _close(self, farewell: bytes) -> None:
        self.state = "closed"
        self._timer = None
        transport: Any = self.transport
        if transport is None:
            return
        if farewell:
            transport.write(farewell)
        transport.loseConnection()
        self._abort = _call_later(ABORT_AFTER_SECONDS, transport.abortConnection)


class _Refusal(Protocol):
    """Answers a connection over the per-address cap with a ``429`` and closes it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def connectionMade(self) -> None:  # noqa: N802
        transport: Any = self.transport
        transport.write(
            _plain_response(
                "429 Too Many Requests",
                f"Too many connections from your address: at most {self.limit} at once.",
            )
        )
        transport.loseConnection()


class GuardedFactory(WrappingFactory):
    protocol = GuardedConnection

    def __init__(self, wrapped: Any, limits: ConnectionLimits) -> None:
        super().__init__(wrapped)
        self.limits = limits
        self.per_client: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        # Daphne's own attributes (``server``, protocol negotiation) stay reachable.
        if name == "wrappedFactory":
            raise AttributeError(name)
        return getattr(self.wrappedFactory, name)

    def buildProtocol(self, addr: Any) -> Any:  # noqa: N802
        host = str(getattr(addr, "host", ""))
        cap = self.limits.max_per_client
        if cap and self.per_client[host] >= cap:
            return _Refusal(cap)
        return super().buildProtocol(addr)

    def registerProtocol(self, p: Any) -> None:  # noqa: N802
        super().registerProtocol(p)
        self.per_client[str(getattr(p.getPeer(), "host", ""))] += 1

    def unregisterProtocol(self, p: Any) -> None:  # noqa: N802
        super().unregisterProtocol(p)
        host = str(getattr(p.getPeer(), "host", ""))
        self.per_client[host] -= 1
        if self.per_client[host] <= 0:
            del self.per_client[host]


class ClosingWebSocketFactory(_DAPHNE_WS_FACTORY):  # type: ignore[misc,valid-type]
    """Daphne's WebSocket factory, failing a connection with a close frame (code and reason)
    instead of dropping it: an oversized frame is answered 1009."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setProtocolOptions(failByDrop=False)


def install(limits: ConnectionLimits) -> None:
    """Make the daphne server started from now on wrap its HTTP factory in a
    ``GuardedFactory`` (daphne builds the factory when it starts, after importing the app)."""

    def guarded_http_factory(server: Any) -> GuardedFactory:
        http_factory = _DAPHNE_HTTP_FACTORY(server)
        # Twisted's own idle timeout (12 hours by default) also bounds a stalled body.
        http_factory.timeOut = limits.idle_timeout
        return GuardedFactory(http_factory, limits)

    daphne_server.HTTPFactory = guarded_http_factory
    daphne_server.WebSocketFactory = ClosingWebSocketFactory
