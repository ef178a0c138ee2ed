"""WebSocket Origin check that compares scheme, host *and port* (what browsers send).

Channels' ``AllowedHostsOriginValidator`` matches the Origin's host name against
``ALLOWED_HOSTS`` and ignores the port, so a page served by any other program on the same
host (``http://127.0.0.1:9999``) could open an authenticated socket with the operator's
cookie. Here, as in Django's CSRF check, the Origin must be this very site — the scheme of
the socket and the ``Host`` header, port included — with that host in ``ALLOWED_HOSTS``,
or be listed exactly in ``CSRF_TRUSTED_ORIGINS`` (a site behind a proxy that rewrites Host):

>>> origin_allowed("http://127.0.0.1:8000", host="127.0.0.1:8000", secure=False,
...                allowed_hosts=["127.0.0.1"], trusted_origins=[])
True
>>> origin_allowed("http://127.0.0.1:9999", host="127.0.0.1:8000", secure=False,
...                allowed_hosts=["127.0.0.1"], trusted_origins=[])
False

A socket without an Origin header is refused, as before (browsers always send one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin_key(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin, default ports filled in; None when malformed."""
    try:
        parts = urlsplit(url.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.path or parts.query or parts.fragment or parts.username or parts.password:
        return None
    return parts.scheme, parts.hostname, port or _DEFAULT_PORTS[parts.scheme]


def origin_allowed(
    origin: str | None,
    *,
    host: str | None,
    secure: bool,
    allowed_hosts: Sequence[str],
    trusted_origins: Sequence[str],
) -> bool:
    if not origin:
        return False
    key = _origin_key(origin)
    if key is None:
        return False
    if any(_origin_key(trusted) == key for trusted in trusted_origins):
        return True
    if not host:
        return False
    domain, _port = split_domain_port(host.lower())
    if not domain or not validate_host(domain, list(allowed_hosts)):
        return False
    own = _origin_key(("https://" if secure else "http://") + host)
    return own == key


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for header, value in scope.get("headers", []):
        if header == name:
            return bytes(value).decode("latin1")
    return None


class SameOriginValidator:
    """ASGI middleware for websocket scopes: deny (403 at the handshake) a foreign Origin."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        allowed = origin_allowed(
            _header(scope, b"origin"),
            host=_header(scope, b"host"),
            secure=scope.get("scheme") == "wss",
            allowed_hosts=settings.ALLOWED_HOSTS,
            trusted_origins=settings.CSRF_TRUSTED_ORIGINS,
        )
        if not allowed:
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
