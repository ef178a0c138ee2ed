#!/usr/bin/env python3
"""``demo_cli.py``: the tiny link CLI of the demo data (``manage.py seed_demo``).

    demo_cli.py http://127.0.0.1:8123/news/harbour-bridge.html
    demo_cli.py --archive bench/data/extraction http://127.0.0.1:8123/news/harbour-bridge.html
    demo_cli.py --describe /tmp/whiteboard.png image/png

Live mode fetches the page from the local demo page server and prints a two-line summary
(title, then the opening of the first real paragraph). ``--archive DIR`` reads the page from
the archived copy instead (``news/harbour-bridge.html`` -> ``DIR/news-harbour-bridge.html``
or ``.html.gz``), which is the fallback entry of the demo config.

What the demo server does decides what this prints, so every attempt outcome shows up:
a page with no paragraphs prints nothing (``empty output``), an HTTP error exits 1 with
the status on stderr, a page the server holds back is killed by the runner's timeout, and
an archive miss exits 4. ``--describe`` is the demo's image "model": it reports what the
file header says (a PNG's size), so image attachments get a real, if modest, description.
Bad arguments exit 2. Standard library only: the runner starts
one process per URL, so start-up time matters.
"""

from __future__ import annotations

import gzip
import http.client
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

SUMMARY_CHARS = 240
FETCH_TIMEOUT_SECONDS = 30
_SKIPPED_TAGS = frozenset({"script", "style", "nav", "header", "footer", "aside", "form"})
_MAIN_TAGS = frozenset({"main", "article"})
_MIN_PARAGRAPH_CHARS = 40


class _PageReader(HTMLParser):
    """Collects the ``<title>`` and the text of ``<p>`` elements outside page chrome.

    Paragraphs inside ``<main>``/``<article>`` are kept apart: cookie banners and
    newsletter boxes are paragraphs too, and come first in the markup.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.paragraphs: list[str] = []
        self.main_paragraphs: list[str] = []
        self._skip_depth = 0
        self._main_depth = 0
        self._in_title = False
        self._paragraph: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skip_depth += 1
        elif tag in _MAIN_TAGS:
            self._main_depth += 1
        elif tag == "title":
            self._in_title = True
        elif tag == "p" and not self._skip_depth:
            self._paragraph = []

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS and self._skip_depth:
            self._skip_depth -= 1
        elif tag in _MAIN_TAGS and self._main_depth:
            self._main_depth -= 1
        elif tag == "title":
            self._in_title = False
        elif tag == "p" and self._paragraph is not None:
            text = " ".join("".join(self._paragraph).split())
            if text:
                self.paragraphs.append(text)
                if self._main_depth:
                    self.main_paragraphs.append(text)
            self._paragraph = None

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif self._paragraph is not None and not self._skip_depth:
            self._paragraph.append(data)


def summarize(html: str) -> str:
    """``"Title (Site)\\nOpening of the first paragraph…"``, or ``""`` for a page with no text.

    >>> summarize("<title>Soup | Kitchen</title><p>A warming red lentil soup for cold days.</p>")
    'Soup (Kitchen)\\nA warming red lentil soup for cold days.'
    """
    reader = _PageReader()
    reader.feed(html)
    reader.close()
    if not reader.paragraphs:
        return ""
    title, _, site = " ".join(reader.title.split()).partition(" | ")
    heading = f"{title} ({site})" if site else title
    paragraphs = reader.main_paragraphs or reader.paragraphs
    opening = next((p for p in paragraphs if len(p) >= _MIN_PARAGRAPH_CHARS), paragraphs[0])
    if len(opening) > SUMMARY_CHARS:
        opening = opening[:SUMMARY_CHARS].rsplit(" ", 1)[0] + "…"
    return f"{heading}\n{opening}" if heading else opening


class DemoCliError(Exception):
    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def fetch_live(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise DemoCliError(f"only plain http demo pages are served, not {url}", 2)
    connection = http.client.HTTPConnection(
        parts.hostname, parts.port or 80, timeout=FETCH_TIMEOUT_SECONDS
    )
    try:
        connection.request("GET", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
        response = connection.getresponse()
        body = response.read()
    except OSError as error:
        raise DemoCliError(f"cannot reach {parts.netloc}: {error}", 1) from None
    finally:
        connection.close()
    if response.status != 200:
        raise DemoCliError(f"HTTP {response.status} {response.reason} for {parts.path}", 1)
    return body.decode("utf-8", errors="replace")


def archived_copy(archive: Path, url: str) -> str:
    """``/news/harbour-bridge.html`` (any prefix) -> ``archive/news-harbour-bridge.html[.gz]``."""
    segments = [segment for segment in urlsplit(url).path.split("/") if segment]
    name = "-".join(segments[-2:]).removesuffix(".html")
    for candidate in (archive / f"{name}.html", archive / f"{name}.html.gz"):
        if name and candidate.is_file():
            raw = candidate.read_bytes()
            if candidate.suffix == ".gz":
                raw = gzip.decompress(raw)
            return raw.decode("utf-8", errors="replace")
    raise DemoCliError(f"no archived copy of {'/'.join(segments[-2:]) or url}", 4)


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def describe(path: Path, mime: str) -> str:
    """The demo's stand-in for a vision model: what the file header says about the image."""
    data = path.read_bytes()
    size = f"{len(data) / 1024:.1f} KB"
    if data.startswith(PNG_SIGNATURE) and len(data) >= 24 and data[12:16] == b"IHDR":
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        return f"A {width}×{height} PNG image ({size}); the demo describes headers, not pixels."
    return f"A {mime or 'binary'} file of {size} that the demo cannot describe."


def main(argv: list[str]) -> int:
    archive: Path | None = None
    if len(argv) == 3 and argv[0] == "--describe":
        try:
            print(describe(Path(argv[1]), argv[2]))
        except OSError as error:
            print(f"demo-cli: cannot read {argv[1]}: {error.strerror}", file=sys.stderr)
            return 1
        return 0
    if len(argv) == 3 and argv[0] == "--archive":
        archive, url = Path(argv[1]), argv[2]
    elif len(argv) == 1 and not argv[0].startswith("-"):
        url = argv[0]
    else:
        print("usage: demo_cli.py [--archive DIR] URL | --describe FILE MIME", file=sys.stderr)
        return 2
    try:
        html = archived_copy(archive, url) if archive is not None else fetch_live(url)
    except DemoCliError as error:
        print(f"demo-cli: {error}", file=sys.stderr)
        return error.exit_code
    summary = summarize(html)
    if summary:
        print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
