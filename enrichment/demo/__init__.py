"""Demo kit for ``manage.py seed_demo``: a throwaway page server, the demo CLI, samples.

``DemoPageServer`` serves the embedded test pages (``bench/data/extraction``) on a free
port of 127.0.0.1 for the length of a ``with`` block. Paths name a page by its file stem
split at the first dash, so ``/news/harbour-bridge.html`` is ``news-harbour-bridge.html``
(or its ``.html.gz``). A few prefixes make the upstream misbehave on purpose:

=====================  ============================================================
``/slow/<page>``       held back until the server stops (the CLI times out)
``/busy/<page>``       503 Service Unavailable
``/drafts/<anything>`` 200 with an empty page (the CLI prints nothing)
``/media/<name>``      an attachment of ``DEMO_MEDIA`` (a generated PNG, a CSV)
anything else          404 Not Found
=====================  ============================================================
"""

from __future__ import annotations

import contextlib
import gzip
import struct
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

EMPTY_PAGE = b"<!DOCTYPE html><html><head><title>Untitled draft</title></head><body></body></html>"
SLOW_HOLD_SECONDS = 30.0


def demo_png(width: int, height: int) -> bytes:
    """A real (if plain) RGB PNG: a diagonal gradient, built with the standard library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(
        b"\x00"  # filter type "none"
        + bytes(
            channel
            for x in range(width)
            for channel in (40 + 180 * x // width, 90 + 120 * y // height, 160)
        )
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


BUDGET_CSV = b"month,planned,spent\nJanuary,1200,1135\nFebruary,1200,1282\nMarch,1250,1190\n"
# name -> (Content-Type, body) of the attachments the demo messages carry.
DEMO_MEDIA: dict[str, tuple[str, bytes]] = {
    "whiteboard.png": ("image/png", demo_png(320, 180)),
    "team-photo.png": ("image/png", demo_png(240, 240)),
    "budget.csv": ("text/csv; charset=utf-8", BUDGET_CSV),
}


class _PageServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # held-back requests must not delay stopping

    def __init__(self, pages_dir: Path) -> None:
        super().__init__(("127.0.0.1", 0), _PageHandler)
        self.pages_dir = pages_dir
        self.released = threading.Event()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A CLI killed by its timeout leaves a broken pipe behind: expected, not news.
        pass

    def page(self, path: str) -> bytes | None:
        parts = [part for part in path.split("/") if part]
        if len(parts) != 2 or not parts[1].endswith(".html") or ".." in parts:
            return None
        stem = f"{parts[0]}-{parts[1].removesuffix('.html')}"
        plain, packed = self.pages_dir / f"{stem}.html", self.pages_dir / f"{stem}.html.gz"
        if plain.is_file():
            return plain.read_bytes()
        if packed.is_file():
            return gzip.decompress(packed.read_bytes())
        return None


class _PageHandler(BaseHTTPRequestHandler):
    server: _PageServer

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        prefix, _, rest = path.lstrip("/").partition("/")
        if prefix == "drafts":
            self._send(200, EMPTY_PAGE)
            return
        if prefix == "busy":
            self._send(503, b"upstream is busy")
            return
        if prefix == "media" and rest in DEMO_MEDIA:
            content_type, body = DEMO_MEDIA[rest]
            self._send(200, body, content_type)
            return
        if prefix == "slow":
            self.server.released.wait(SLOW_HOLD_SECONDS)
            path = "/" + rest
        page = self.server.page(path)
        if page is None:
            self._send(404, b"not found")
        else:
            self._send(200, page)

    def _send(
        self, status: int, body: bytes, content_type: str = "text/html; charset=utf-8"
    ) -> None:
        with contextlib.suppress(OSError):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the decision log is the record; no access log on the console


class DemoPageServer:
    """``with DemoPageServer(pages_dir) as server: server.base_url`` -> ``http://127.0.0.1:N``."""

    def __init__(self, pages_dir: Path) -> None:
        self.pages_dir = pages_dir
        self._server: _PageServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the demo page server is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> DemoPageServer:
        self._server = _PageServer(self.pages_dir)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"demo-page-server {self.base_url}", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        self._server = self._thread = None
