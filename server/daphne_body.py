"""Daphne's request object, taught the body limits of ``server.body_limits``.

Stock daphne (4.x) lets Twisted spool the body to a temporary file, has Twisted parse a
multipart body into memory (``request.args``, which daphne never reads), then copies the whole
file into the application's queue in one go: a 400 MB anonymous POST to ``/login/`` held
4.9 GB. ``install`` swaps in ``LimitedWebRequest``, which

- refuses a declared ``Content-Length`` over the limit without keeping a byte of the body,
  and cuts a chunked body off as soon as it passes the limit (the rest is read and dropped,
  so the client gets the ``413`` instead of a reset connection);
- turns Twisted's form parsing off;
- gives the application one ``SpooledBody`` message pointing at the spool file, which
  ``RequestBodyLimit`` reads in chunks as Django asks.

It is installed from ``controlui.asgi`` (daphne imports the application before it accepts a
connection, and looks ``WebRequest`` up each time it builds a protocol).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import IO, Any
from urllib.parse import unquote

from daphne import http_protocol

from server.body_limits import SpooledBody, too_large_response

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


def limited_request_class(
    limit_for: Callable[[str, str], int],
) -> type[Any]:
    class LimitedWebRequest(_DAPHNE_REQUEST):  # type: ignore[misc,valid-type]
        # Twisted would parse multipart bodies into memory for request.args, unused by daphne.
        _parsePOSTFormSubmission = False

        def gotLength(self, length: int | None) -> None:  # noqa: N802 (Twisted API)
            command = getattr(self.channel, "_command", b"GET")
            raw_path = getattr(self.channel, "_path", b"/").split(b"?", 1)[0]
            self.body_method = command.decode("latin-1")
            self.body_path = unquote(raw_path.decode("latin-1"))
            self.body_limit = limit_for(self.body_method, self.body_path)
            self.body_received = 0
            self.body_refused = length is not None and length > self.body_limit
            if self.body_refused:
                self.content = _Discard()
            else:
                super().gotLength(length)

        def handleContentChunk(self, data: bytes) -> None:  # noqa: N802 (Twisted API)
            if self.body_refused:
                return
            self.body_received += len(data)
            if self.body_received > self.body_limit:
                self.body_refused = True
                self.content.close()
                self.content = _Discard()
                return
            super().handleContentChunk(data)

        def process(self) -> Any:
            if getattr(self, "body_refused", False):
                self._refuse()
                return None
            if self.content is not None and not isinstance(self.content, _Discard):
                self.content = _SpoolHandle(self.content)
            return super().process()

        def _refuse(self) -> None:
            self.request_start = time.time()
            content_type, body = too_large_response(
                self.body_method, self.body_path, self.body_limit
            )
            self.handle_reply(
                {
                    "type": "http.response.start",
                    "status": 413,
                    "headers": [
                        (b"Content-Type", content_type.encode()),
                        (b"Connection", b"close"),
                    ],
                }
            )
            self.handle_reply({"type": "http.response.body", "body": body})

    return LimitedWebRequest


def install(limit_for: Callable[[str, str], int]) -> None:
    """Make every HTTP request daphne builds from now on a ``LimitedWebRequest``."""
    http_protocol.WebRequest = limited_request_class(limit_for)
