"""Daphne's request object, taught the body limits of ``server.body_limits``.

Stock daphne (4.x) lets Twisted spool the body to a temporary file, has Twisted parse a
multipart body into memory (``request.args``, which daphne never reads), then copies the whole
file into the application's queue in one go: a 400 MB anonymous POST to ``/login/`` held
4.9 GB. ``install`` swaps in ``LimitedWebRequest``, which

- refuses a declared ``Content-Length`` over the limit without keeping a byte of the body,
  and cuts a chunked body off as soon as it passes the limit (the rest is read and dropped,
  so the client gets the ``413`` instead of a reset connection);
- answers ``401`` to a request that must carry credentials and does not (or carries ones
  that do not belong to an active user, checked in a worker thread while the connection is
  paused), again without keeping its body;
- turns Twisted's form parsing off (per request: Twisted sets it in ``__init__``, so a class
  attribute would not do; with it on, Twisted read a whole multipart body into memory);
- gives the application one ``SpooledBody`` message pointing at the spool file, which
  ``RequestBodyLimit`` reads in chunks as Django asks.

It is installed from ``controlui.asgi`` (daphne imports the application before it accepts a
connection, and looks ``WebRequest`` up each time it builds a protocol).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any, Literal
from urllib.parse import unquote

from daphne import http_protocol
from django.conf import settings
from twisted.internet import threads

from server.body_limits import SpooledBody, too_large_response

# What a route asks of a request's credentials before its body is read: nothing; that it
# carries some (a session cookie or a bearer token); or that they belong to an active user.
CredentialNeed = Literal["none", "present", "verified"]
UNAUTHENTICATED = "Authentication required: log in or send Authorization: Bearer <token>."


@dataclass(frozen=True)
class CredentialRule:
    need_for: Callable[[str, str], CredentialNeed]  # (method, path) -> what is checked
    valid: Callable[[str | None, str | None], bool]  # (session key, bearer token), sync


NO_CREDENTIAL_RULE = CredentialRule(need_for=lambda method, path: "none", valid=lambda s, t: True)

_DAPHNE_REQUEST = http_protocol.WebRequest


class _Discard:
    """Where the body of a refused request goes: nowhere, but Twisted may still tell/seek."""

    closed = False

    def write(self, data: bytes) -> None:
        pass

    def read(self, size: int = -1) -> bytes:
        return b""

    def seek(self, offset: int, whence: int = 0) -> int:
        return 0

    def tell(self) -> int:
        return 0

    def close(self) -> None:
        self.closed = True


class _SpoolHandle:
    """Daphne reads the body with ``seek(0)`` then ``read(n)`` until a short read: answer the
    first read with one empty ``SpooledBody`` so the file itself reaches the application."""

    def __init__(self, spool: IO[bytes]) -> None:
        self._spool = spool

    @property
    def closed(self) -> bool:
        return self._spool.closed

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._spool.seek(offset, whence)

    def tell(self) -> int:
        return self._spool.tell()

    def read(self, size: int = -1) -> bytes:
        return SpooledBody(self._spool)

    def close(self) -> None:
        self._spool.close()


def _bearer_token(request: Any) -> str | None:
    values = request.requestHeaders.getRawHeaders(b"Authorization") or []
    scheme, _, token = (values[0] if values else b"").decode("latin-1").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _session_key(request: Any) -> str | None:
    value = request.received_cookies.get(settings.SESSION_COOKIE_NAME.encode("latin-1"))
    return value.decode("latin-1") if value else None


def _tell_connection(request: Any, event: str) -> None:
    """Pass ``event`` to the connection guard (``server.connections``), when there is one."""
    transport = getattr(getattr(request, "channel", None), "transport", None)
    handler = getattr(type(transport), event, None)
    if handler is not None:
        handler(transport)


def limited_request_class(
    limit_for: Callable[[str, str], int], credentials: CredentialRule = NO_CREDENTIAL_RULE
) -> type[Any]:
    class LimitedWebRequest(_DAPHNE_REQUEST):  # type: ignore[misc,valid-type]
        body_refused: int = 0  # the status refusing the body (413, 401), or 0
        verifying = False  # credentials being checked in a thread; the connection is paused
        process_waiting = False  # the whole body arrived while they were being checked

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # Twisted would parse multipart bodies into memory for request.args, unused by
            # daphne; it sets this flag in Request.__init__, so only the instance counts.
            self._parsePOSTFormSubmission = False

        def gotLength(self, length: int | None) -> None:  # noqa: N802 (Twisted API)
            _tell_connection(self, "headers_complete")  # the header deadline is met
            command = getattr(self.channel, "_command", b"GET")
            raw_path = getattr(self.channel, "_path", b"/").split(b"?", 1)[0]
            self.body_method = command.decode("latin-1")
            self.body_path = unquote(raw_path.decode("latin-1"))
            self.body_limit = limit_for(self.body_method, self.body_path)
            self.body_received = 0
            if length is not None and length > self.body_limit:
                self._refuse_body(413)
                return
            need = credentials.need_for(self.body_method, self.body_path)
            session_key, token = _session_key(self), _bearer_token(self)
            if need != "none" and not (session_key or token):
                self._refuse_body(401)
                return
            super().gotLength(length)
            if need == "verified":
                self._verify(session_key, token)

        def _refuse_body(self, status: int) -> None:
            self.body_refused = status
            spool = getattr(self, "content", None)
            if spool is not None:
                spool.close()
            self.content = _Discard()

        def _verify(self, session_key: str | None, token: str | None) -> None:
            # No more of the body is read until the credentials are known good.
            self.verifying = True
            self.transport.pauseProducing()
            checked = threads.deferToThread(credentials.valid, session_key, token)
            checked.addErrback(lambda failure: False)
            checked.addCallback(self._verified)

        def _verified(self, valid: bool) -> None:
            self.verifying = False
            if getattr(self, "channel", None) is None or self.finished:  # the client left
                return
            if not valid and not self.body_refused:
                self._refuse_body(401)
            self.transport.resumeProducing()
            if self.process_waiting:
                self.process_waiting = False
                self.process()

        def handleContentChunk(self, data: bytes) -> None:  # noqa: N802 (Twisted API)
            if self.body_refused:
                return
            self.body_received += len(data)
            if self.body_received > self.body_limit:
                self._refuse_body(413)
                return
            super().handleContentChunk(data)

        def finish(self) -> Any:
            # Before Twisted moves on to a pipelined request (which may start right away).
            _tell_connection(self, "request_finished")
            return super().finish()

        def process(self) -> Any:
            if self.verifying:
                self.process_waiting = True
                return None
            if self.body_refused:
                self._refuse()
                return None
            if self.content is not None and not isinstance(self.content, _Discard):
                if not self.requestHeaders.hasHeader(b"Content-Length"):
                    # A chunked body, now whole: Django parses a form only up to the length.
                    self.requestHeaders.removeHeader(b"Transfer-Encoding")
                    self.requestHeaders.setRawHeaders(
                        b"Content-Length", [str(self.body_received).encode()]
                    )
                self.content = _SpoolHandle(self.content)
            return super().process()

        def _refuse(self) -> None:
            self.request_start = time.time()
            if self.body_refused == 401:
                content_type, body = "application/json", json.dumps({"detail": UNAUTHENTICATED})
                payload = body.encode()
            else:
                content_type, payload = too_large_response(
                    self.body_method, self.body_path, self.body_limit
                )
            self.handle_reply(
                {
                    "type": "http.response.start",
                    "status": self.body_refused,
                    "headers": [
                        (b"Content-Type", content_type.encode()),
                        (b"Connection", b"close"),
                    ],
                }
            )
            self.handle_reply({"type": "http.response.body", "body": payload})

    return LimitedWebRequest


def install(
    limit_for: Callable[[str, str], int], credentials: CredentialRule = NO_CREDENTIAL_RULE
) -> None:
    """Make every HTTP request daphne builds from now on a ``LimitedWebRequest``."""
    http_protocol.WebRequest = limited_request_class(limit_for, credentials)
