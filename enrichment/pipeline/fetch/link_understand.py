"""The built-in ``link-understand`` fetcher: its arguments, and a run inside the caller.

The console script (``enrichment.cli.link_understand``) and the in-process runner share this module, so a
link model whose command is the bare name ``link-understand`` gives the same answer whether it
runs as a subprocess or inside the server: the same argument parser over the same rendered
argv, the same guarded fetch and limits, the same extraction, wrapper, cache key and one-line
errors. ``link_understand_run.run_in_process`` returns the ``CommandResult`` the subprocess runner would have made
from the script's stdout, stderr and exit code::

    argv ("link-understand", "--url", "http://127.0.0.1:8080/a", "--format", "text")
      -> success: stdout_text = the wrapped page, stdout_bytes = len(page + "\\n") in UTF-8
      -> HTTP 404: failed, "exited with code 1", stderr_tail "http://127.0.0.1:8080: HTTP 404"
      -> "--format pdf": failed, "exited with code 2", stderr_tail = argparse's usage + error

Only the CPU-bound part (extraction) leaves the event loop, through ``extract`` (the server
passes its process pool's ``run``). This module holds the arguments and the CPU-bound steps
and imports nothing heavy, so the script starts fast; ``link_understand_run`` holds the
in-process run (asyncio, aiohttp).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from enrichment.pipeline.config.model import WebFetchConfig
from enrichment.pipeline.fetch.wrapper import resolve_max_chars

if TYPE_CHECKING:  # the console script imports this module first: keep it light
    from enrichment.pipeline.extract.page import ExtractMode
    from enrichment.pipeline.fetch.webfetch import PageResult

BUILTIN_COMMAND = "link-understand"
IN_PROCESS_TYPE = "in-process"
# OpenClaw 2026.9's link runner fetches the page itself, drops every argument naming
# LinkUrl/LinkFinalUrl and gives the page on stdin with these two variables set.
FINAL_URL_ENV = "OPENCLAW_LINK_FINAL_URL"
URL_ENV = "OPENCLAW_LINK_URL"
STDIN_ORIGIN = "stdin"
EMPTY_STDIN = "no page (empty input); give the page on stdin, or --url or --html-file"


def is_builtin(argv: Sequence[str]) -> bool:
    """Only the bare name: ``/usr/bin/link-understand`` (a path) still runs as a subprocess."""
    return bool(argv) and argv[0] == BUILTIN_COMMAND


# --- arguments ---------------------------------------------------------------------------------


class CliExit(Exception):
    """argparse wanted to exit (bad arguments, ``--help``): what it printed and its status."""

    def __init__(self, status: int, stdout: str, stderr: str) -> None:
        super().__init__(status)
        self.status = status
        self.stdout = stdout
        self.stderr = stderr


class _CapturingParser(argparse.ArgumentParser):
    """Prints into buffers and raises CliExit instead of writing to sys.* and exiting."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.out = io.StringIO()
        self.err = io.StringIO()

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:
            (self.out if file is None or file is sys.stdout else self.err).write(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            self.err.write(message)
        raise CliExit(status, self.out.getvalue(), self.err.getvalue())


def _help_width() -> int:
    # What a subprocess with piped output gets from shutil.get_terminal_size(): $COLUMNS, else
    # 80, so usage text is identical whether or not the server has a terminal.
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    return (columns if columns > 0 else 80) - 2


def _positive_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not number > 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {value!r}")
    return number


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {value!r}")
    return number


def build_parser(capture: bool = False) -> argparse.ArgumentParser:
    parser_class = _CapturingParser if capture else argparse.ArgumentParser
    width = _help_width()
    parser = parser_class(
        prog=BUILTIN_COMMAND,
        description="Fetch a web page through the SSRF guard and print its main content.",
        epilog=(
            "Without --url or --html-file the page is read from stdin (at most the fetch's "
            f"maxResponseBytes), its address from ${FINAL_URL_ENV}, else ${URL_ENV}: "
            "OpenClaw's link-model contract."
        ),
        formatter_class=lambda prog: argparse.HelpFormatter(prog, width=width),
    )
    # Neither --url nor --html-file: the page comes on stdin, as OpenClaw's link runner gives
    # it (see ``stdin_page``).
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--url", help="http(s) URL to fetch (without it: the page on stdin)")
    source.add_argument("--html-file", help="extract a local .html (or .html.gz) file")
    parser.add_argument("--base-url", help="URL the --html-file was served from")
    parser.add_argument("--format", choices=("markdown", "text"), default="markdown")
    parser.add_argument(
        "--max-chars", type=_positive_int, help="default: the config's maxChars, else 50000"
    )
    parser.add_argument(
        "--timeout", type=_positive_float, help="seconds (default: the config's, else 30)"
    )
    parser.add_argument("--no-cache", action="store_true", help="bypass the result cache")
    parser.add_argument("--no-wrap", action="store_true", help="print without the wrapper")
    return parser


_parsers = threading.local()


def capturing_parser() -> argparse.ArgumentParser:
    """``build_parser(capture=True)``, built once per thread and help width (building one
    costs more than a whole parse), with empty buffers for each use."""
    width = _help_width()
    parsers: dict[int, _CapturingParser] = _parsers.__dict__.setdefault("by_width", {})
    parser = parsers.get(width)
    if parser is None:
        built = build_parser(capture=True)
        assert isinstance(built, _CapturingParser)
        parser = parsers[width] = built
    parser.out, parser.err = io.StringIO(), io.StringIO()
    return parser


@dataclass(frozen=True)
class PageRequest:
    """One parsed ``link-understand`` invocation."""

    url: str | None
    html_file: str | None
    base_url: str | None
    mode: ExtractMode
    max_chars: int
    timeout: float
    no_cache: bool
    no_wrap: bool

    @property
    def from_stdin(self) -> bool:
        return not self.url and not self.html_file

    @property
    def origin(self) -> str:
        """What a failure line starts with: the file, the URL's scheme://host[:port], or
        ``stdin``."""
        if self.from_stdin:
            return STDIN_ORIGIN
        return self.html_file if self.html_file else origin_of(self.url or "")


def parse_arguments(parser: argparse.ArgumentParser, args: Sequence[str]) -> argparse.Namespace:
    """Parse the arguments after the command name (exits through ``parser`` when bad).

    A server runs one link model's argv over and over with only the URL changing, so a parse
    is kept per shape: the arguments with the value of their one ``--url`` stood in for.
    argparse stores an option's value as given, and classifies any value that is empty or
    does not start with ``-`` as a plain argument, so such a value cannot change the parse;
    any other form (``--url=…``, an abbreviation, a value starting with ``-``, several
    ``--url``) is parsed whole each time."""
    shape = _url_shape(args)
    if shape is None:
        return _parse(parser, args)
    url, template = shape
    shapes: dict[tuple[str, ...], argparse.Namespace] = parser.__dict__.setdefault("shapes", {})
    known = shapes.get(template)
    if known is not None:
        return argparse.Namespace(**{**vars(known), "url": url})
    parsed = _parse(parser, args)  # the first of its shape, parsed whole (errors name it)
    if len(shapes) >= _SHAPES_KEPT:
        shapes.clear()
    shapes[template] = argparse.Namespace(**vars(parsed))
    return parsed


# Distinct argument shapes kept per parser (one per link model's argv in practice).
_SHAPES_KEPT = 64
_URL_STAND_IN = "http://url.invalid/"


def _url_shape(args: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """``(url, args with the url stood in for)`` when ``args`` hold exactly one ``--url``
    followed by a plain value; otherwise None (parsed whole).

    >>> _url_shape(["--url", "http://a.test/x", "--format", "text"])
    ('http://a.test/x', ('--url', 'http://url.invalid/', '--format', 'text'))
    >>> _url_shape(["--url", "-x"]) is None, _url_shape(["--url=http://a.test/"]) is None
    (True, True)
    """
    if args.count("--url") != 1:
        return None
    at = list(args).index("--url") + 1
    if at >= len(args) or args[at].startswith("-"):
        return None
    return args[at], (*args[:at], _URL_STAND_IN, *args[at + 1 :])


def _parse(parser: argparse.ArgumentParser, args: Sequence[str]) -> argparse.Namespace:
    parsed = parser.parse_args(list(args))
    if parsed.base_url and not parsed.html_file:
        parser.error("--base-url only applies to --html-file")
    return parsed


def page_request(parsed: argparse.Namespace, settings: WebFetchConfig) -> PageRequest:
    """The parsed arguments over the stored ``tools.web.fetch`` settings: ``--max-chars`` and
    ``--timeout`` win over the config, then the defaults (notes A2); maxChars is always capped
    by ``maxCharsCap``."""
    requested = parsed.max_chars if parsed.max_chars is not None else settings.max_chars
    timeout = parsed.timeout if parsed.timeout is not None else float(settings.timeout_seconds)
    return PageRequest(
        url=parsed.url,
        html_file=parsed.html_file,
        base_url=parsed.base_url,
        mode=parsed.format,
        max_chars=resolve_max_chars(requested, settings.max_chars_cap),
        timeout=timeout,
        no_cache=parsed.no_cache,
        no_wrap=parsed.no_wrap,
    )


def parse_request(
    parser: argparse.ArgumentParser, args: Sequence[str], settings: WebFetchConfig
) -> PageRequest:
    return page_request(parse_arguments(parser, args), settings)


def cache_ttl_seconds(settings: WebFetchConfig) -> float:
    """Notes A8: the TTL is round(minutes x 60000) ms, and 0 turns the cache off."""
    return round(settings.cache_ttl_minutes * 60_000) / 1000


def origin_of(url: str) -> str:
    scheme, separator, rest = url.strip().partition("://")
    if not separator:
        return url.strip()
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    return f"{scheme.lower()}://{authority}"


def page_output(result: PageResult, request: PageRequest) -> str:
    return result.content[: request.max_chars] if request.no_wrap else result.text


# --- the CPU-bound steps (module level: they run in pool workers) --------------------------------


def extract_fetched(url: str, response: Any, mode: ExtractMode, max_chars: int) -> PageResult | str:
    """Extraction of a fetched page; an extraction failure comes back as its reason (a str)
    so the caller need not import the extractor to unpickle its exception."""
    from enrichment.pipeline.extract.page import ExtractionError
    from enrichment.pipeline.fetch.webfetch import page_result_from_response

    try:
        return page_result_from_response(url, response, mode, max_chars)
    except ExtractionError as error:
        return error.reason


def extract_file(
    raw: bytes, gzipped: bool, mode: ExtractMode, base_url: str | None, max_chars: int, wrap: bool
) -> tuple[str | None, str | None]:
    """``--html-file``: (output, None) or (None, failure reason)."""
    import gzip

    from enrichment.pipeline.extract.page import ExtractionError, extract_html
    from enrichment.pipeline.fetch.webfetch import compose_page_text
    from enrichment.pipeline.fetch.wrapper import wrap_with_limit

    try:
        html = gzip.decompress(raw) if gzipped else raw
        content = compose_page_text(extract_html(html, None, mode=mode, base_url=base_url), mode)
    except ExtractionError as error:
        return None, error.reason
    except OSError as error:  # a broken .gz
        return None, str(error.strerror or error)
    return (content[:max_chars] if not wrap else wrap_with_limit(content, max_chars).text), None


class StdinPageError(Exception):
    """The page on stdin (or its address) cannot be used; ``line`` is the whole stderr line."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


def page_url_from_environment(environ: Mapping[str, str]) -> str | None:
    """The page's address for relative links and the cache key: ``OPENCLAW_LINK_FINAL_URL``
    (after redirects), else ``OPENCLAW_LINK_URL``; None when neither is set."""
    for name in (FINAL_URL_ENV, URL_ENV):
        value = (environ.get(name) or "").strip()
        if not value:
            continue
        scheme, separator, rest = value.partition("://")
        if scheme.lower() not in ("http", "https") or not separator or not rest.strip("/"):
            raise StdinPageError(f"{name}: not an http(s) URL: {value[:200]!r}")
        return value
    return None


def check_stdin_page(raw: bytes, max_bytes: int) -> None:
    """Refuse what cannot be a page: nothing, more than ``max_bytes`` (the fetch's
    ``maxResponseBytes``; the caller reads one byte more to know), or binary data."""
    from enrichment.pipeline.files.extraction import sniff_binary_magic

    if len(raw) > max_bytes:
        raise StdinPageError(
            f"{STDIN_ORIGIN}: the page is larger than maxResponseBytes ({max_bytes} bytes)"
        )
    if not raw.strip():
        raise StdinPageError(f"{STDIN_ORIGIN}: {EMPTY_STDIN}")
    kind = sniff_binary_magic(raw)
    if kind is not None or b"\x00" in raw[:8192]:
        detail = f" ({kind})" if kind else ""
        raise StdinPageError(f"{STDIN_ORIGIN}: binary data{detail}, not a page")


_HTML_HINT = re.compile(
    rb"<(?:!doctype\s+html|html|head|body|main|article|div|p|title)[\s>/]", re.I
)


def stdin_content_type(raw: bytes) -> str | None:
    """OpenClaw passes the body without its Content-Type: HTML when it looks like HTML (a
    fragment too, not only a document that opens with <html>), JSON when it parses, else
    None (the extractor's sniffing decides)."""
    if _HTML_HINT.search(raw[:8192]):
        return "text/html"
    if raw.lstrip()[:1] in (b"{", b"["):
        try:
            json.loads(raw)
        except ValueError:
            return None
        return "application/json"
    return None


def stdin_cache_key(url: str, raw: bytes, mode: ExtractMode, max_chars: int, wrap: bool) -> str:
    """Per address *and* content: the same URL fetched again by the gateway may differ."""
    digest = hashlib.sha256(raw).hexdigest()
    material = f"stdin\n{url.strip()}\n{digest}\n{mode}\n{max_chars}\n{wrap}"
    return f"link-understand:{hashlib.sha256(material.encode()).hexdigest()}"


def extract_stdin_page(
    raw: bytes, url: str | None, mode: ExtractMode, max_chars: int, wrap: bool
) -> tuple[str | None, str | None]:
    """The page from stdin (already checked): (output, None) or (None, failure reason)."""
    from enrichment.pipeline.extract.page import ExtractionError, extract_content
    from enrichment.pipeline.fetch.webfetch import compose_page_text
    from enrichment.pipeline.fetch.wrapper import wrap_with_limit

    try:
        extracted = extract_content(raw, stdin_content_type(raw), mode=mode, base_url=url)
    except ExtractionError as error:
        return None, error.reason
    content = compose_page_text(extracted, mode)
    if not content.strip():
        return None, "no readable content"
    return (wrap_with_limit(content, max_chars).text if wrap else content[:max_chars]), None


def warm_up() -> None:
    """Import the extractor and run it once, so the first real page pays nothing extra."""
    from enrichment.pipeline.extract.page import extract_html

    page = b"<html><body><article><p>Warm up the extractor once.</p></article></body></html>"
    # Too little text may count as no content; the imports and first parse are what matter.
    with contextlib.suppress(Exception):
        extract_html(page, None, mode="markdown", base_url=None)


# --- the in-process run ----------------------------------------------------------------------------
