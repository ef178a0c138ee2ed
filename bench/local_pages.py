"""A local HTTP server with test pages for the link benchmarks (127.0.0.1 only).

``/big/<n>``: one ~50 KB article page (navigation, sidebar, a long article, comments,
footer), the same bytes for every ``n`` so each ``n`` is a distinct URL (no cache hit).
``/page/<n>``: page ``n`` modulo the extraction corpus in ``bench/data/extraction``.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent / "data" / "extraction"

_WORDS = [
    "harbour",
    "tide",
    "lantern",
    "meadow",
    "granite",
    "orchard",
    "compass",
    "willow",
    "ember",
    "summit",
    "river",
    "quarry",
    "thistle",
    "beacon",
    "cedar",
    "valley",
    "ferry",
    "pebble",
    "glacier",
    "saddle",
    "copper",
    "marsh",
]


def corpus_pages() -> list[bytes]:
    pages = []
    for path in sorted(CORPUS_DIR.iterdir()):
        if path.name.endswith(".html"):
            pages.append(path.read_bytes())
        elif path.name.endswith(".html.gz"):
            pages.append(gzip.decompress(path.read_bytes()))
    return pages


def big_page(target_bytes: int = 50_000) -> bytes:
    """A deterministic article page of about ``target_bytes``."""
    nav = "".join(f'<li><a href="/section/{w}">{w.title()}</a></li>' for w in _WORDS)
    sidebar = "".join(f'<li><a href="/tag/{w}">#{w}</a></li>' for w in _WORDS)
    paragraphs: list[str] = []
    size = 0
    index = 0
    while size < target_bytes - 3_000:
        words = [_WORDS[(index * 7 + k * 3) % len(_WORDS)] for k in range(60)]
        sentence = " ".join(words).capitalize() + "."
        heading = f"<h2>Part {index // 5 + 1}</h2>" if index % 5 == 0 else ""
        paragraph = f"{heading}<p>{sentence} {sentence[::-1].lower()}.</p>\n"
        paragraphs.append(paragraph)
        size += len(paragraph)
        index += 1
    html = (
        "<!doctype html><html><head><title>Field notes from the coast</title>"
        '<meta charset="utf-8"><style>.ad{display:none}</style></head><body>'
        f"<header><nav><ul>{nav}</ul></nav></header>"
        f'<aside class="sidebar"><ul>{sidebar}</ul></aside>'
        "<main><article><h1>Field notes from the coast</h1>"
        f"{''.join(paragraphs)}</article>"
        '<section class="comments"><p>Great read, thanks!</p></section></main>'
        "<footer><p>Copyright 2026 Coastal Notes. All rights reserved.</p></footer>"
        "</body></html>"
    )
    return html.encode()


@contextmanager
def page_server() -> Iterator[str]:
    """Serve the pages; yields the base URL ``http://127.0.0.1:<port>``."""
    big = big_page()
    corpus = corpus_pages()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            parts = self.path.strip("/").split("/")
            if len(parts) == 2 and parts[0] == "big" and parts[1].isdigit():
                body = big
            elif len(parts) == 2 and parts[0] == "page" and parts[1].isdigit():
                body = corpus[int(parts[1]) % len(corpus)]
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        # listen() backlog: 200 clients connect at once; the default 5 drops SYNs, and a
        # dropped SYN is retried after 1, 3, 7, 15 s — latency that is the page server's.
        request_queue_size = 1024
        daemon_threads = True

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def builtin_config(command: str = "link-understand") -> dict[str, object]:
    """The shipped default link model (or the same script by ``command`` path), with the
    local page server allowed through the SSRF policy opt-in."""
    return {
        "tools": {
            "links": {
                "models": [
                    {
                        "type": "cli",
                        "command": command,
                        "args": ["--url", "{{LinkUrl}}", "--format", "markdown"],
                    }
                ]
            },
            "web": {"fetch": {"ssrfPolicy": {"allowedHostnames": ["127.0.0.1"]}}},
        }
    }


def process_tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (0 when gone)."""
    total = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
        stack += [int(child) for child in children]
    return total


def process_tree_cpu_seconds(pid: int, *, descendants: bool = True) -> float:
    """User + system CPU seconds of ``pid`` and its live descendants (children that already
    exited are counted by the kernel in their parent's ``cutime``/``cstime`` only once reaped);
    of ``pid`` alone with ``descendants=False``."""
    import os

    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(") ", 1)[1].split()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        if descendants:
            stack += [int(child) for child in children]
    return total
