"""``link-understand``: print the readable, wrapped content of a web page.

    link-understand --url https://example.com/post [--format text] [--max-chars 8000]
    link-understand --html-file page.html [--base-url https://example.com/] --no-wrap
    OPENCLAW_LINK_FINAL_URL=https://example.com/post link-understand --format markdown < page

Stdout gets the page (inside the untrusted-content wrapper unless ``--no-wrap``). On failure
the exit code is 1 and stderr gets one line, ``<origin>: <reason>``. Bad arguments exit 2.

With neither ``--url`` nor ``--html-file`` this is OpenClaw's link model: OpenClaw 2026.9
fetches the page itself, drops every argument naming ``LinkUrl`` and gives the page on stdin,
with its address in ``OPENCLAW_LINK_FINAL_URL`` (after redirects) and ``OPENCLAW_LINK_URL``.
The page is read up to the fetch's ``maxResponseBytes``; nothing, more, binary data or a
malformed address is a failure (``stdin: …`` on stderr, exit 1) and OpenClaw falls back to
the raw page. The address serves relative links and the cache key; without one the page is
still extracted, uncached.

The SSRF policy comes from ``LINK_UNDERSTAND_SSRF_POLICY`` (JSON, camelCase ``ssrfPolicy``
shape, e.g. ``{"allowPrivateNetwork": true}``); without it the strict default applies. The
other ``tools.web.fetch`` settings come from ``LINK_UNDERSTAND_FETCH`` (JSON, the same keys:
``maxChars``, ``maxCharsCap``, ``maxResponseBytes``, ``timeoutSeconds``, ``cacheTtlMinutes``,
``maxRedirects``, ``userAgent``), which a link run sets from the stored config; ``--max-chars``
and ``--timeout`` given on the command line win over it (notes A2: the parameter, then the
config, then the default; maxChars is always capped by ``maxCharsCap``). With
``DJANGO_SETTINGS_MODULE`` set, results are cached in Django's default cache for
``cacheTtlMinutes`` (15 by default; 0 turns the cache off).

Start-up is kept short: the extractor (trafilatura, lxml) and the HTTP client load only when a page is
fetched or extracted, and Django only to reach the shared cache, with settings alone (no
``django.setup()``: a cache needs no installed apps). The server runs the same code in-process
for the bare command name (``enrichment.pipeline.fetch.link_understand``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from enrichment.pipeline.config.model import WebFetchConfig
from enrichment.pipeline.fetch.cli_environment import (
    FETCH_ENV,
    POLICY_ENV,
    fetch_settings_from_env,
    policy_from_env,
)
from enrichment.pipeline.fetch.link_understand import (
    PageRequest,
    StdinPageError,
    build_parser,
    cache_ttl_seconds,
    page_output,
    page_request,
    parse_arguments,
)
from enrichment.pipeline.net.ssrf import SsrfPolicy

if TYPE_CHECKING:
    from enrichment.pipeline.extract.page import ExtractMode
    from enrichment.pipeline.fetch.webfetch import PageCache
    from enrichment.pipeline.net.http import FetchResponse

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    parsed = parse_arguments(parser, sys.argv[1:] if argv is None else argv)
    try:
        policy = policy_from_env(os.environ.get(POLICY_ENV))
    except ValueError as error:
        parser.error(f"{POLICY_ENV}: {error}")
    try:
        settings = fetch_settings_from_env(os.environ.get(FETCH_ENV))
    except ValueError as error:
        parser.error(f"{FETCH_ENV}: {error}")
    request = page_request(parsed, settings)
    # Imported only now: --help and bad arguments need neither the HTTP client nor the extractor.
    from enrichment.pipeline.extract.page import ExtractionError
    from enrichment.pipeline.net.http import FetchError

    try:
        if request.from_stdin:
            output = _from_stdin(request, settings)
        elif request.html_file:
            output = _from_file(request)
        else:
            output = _from_url(request, policy, settings)
    except StdinPageError as error:
        print(error.line, file=sys.stderr)
        return 1
    except (FetchError, ExtractionError) as error:
        print(f"{request.origin}: {error.reason}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"{request.origin}: {error.strerror or error}", file=sys.stderr)
        return 1
    sys.stdout.write(output + "\n")
    return 0


def _from_url(request: PageRequest, policy: SsrfPolicy, settings: WebFetchConfig) -> str:
    from enrichment.pipeline.fetch.webfetch import read_page
    from enrichment.pipeline.net.http import clamp_max_response_bytes, fetch_guarded

    def fetch(url: str) -> FetchResponse:
        return fetch_guarded(
            url,
            policy=policy,
            timeout_seconds=request.timeout,
            max_redirects=settings.max_redirects,
            max_response_bytes=clamp_max_response_bytes(settings.max_response_bytes),
            user_agent=settings.user_agent,
        )

    mode: ExtractMode = request.mode
    ttl_seconds = cache_ttl_seconds(settings)
    cache = None if request.no_cache or ttl_seconds <= 0 else _django_cache(ttl_seconds)
    result = read_page(
        request.url or "",
        policy=policy,
        mode=mode,
        max_chars=request.max_chars,
        cache=cache,
        fetch=fetch,
    )
    return page_output(result, request)


def _from_stdin(request: PageRequest, settings: WebFetchConfig) -> str:
    from enrichment.pipeline.fetch.link_understand import (
        STDIN_ORIGIN,
        check_stdin_page,
        extract_stdin_page,
        page_url_from_environment,
        stdin_cache_key,
    )
    from enrichment.pipeline.net.http import clamp_max_response_bytes

    stream = sys.stdin
    if stream is None or stream.isatty():  # a person typed the bare command: do not wait
        raise StdinPageError(
            f"{STDIN_ORIGIN}: no page (stdin is a terminal); give the page on stdin, "
            "or --url or --html-file"
        )
    limit = clamp_max_response_bytes(settings.max_response_bytes)
    raw = stream.buffer.read(limit + 1)  # one byte more tells "too large" from "just fits"
    check_stdin_page(raw, limit)
    url = page_url_from_environment(os.environ)
    wrap = not request.no_wrap
    cache = None
    ttl_seconds = cache_ttl_seconds(settings)
    if url is not None and not request.no_cache and ttl_seconds > 0:
        cache = _django_cache(ttl_seconds)
    key = stdin_cache_key(url or "", raw, request.mode, request.max_chars, wrap)
    if cache is not None and (hit := cache.get(key)) is not None:
        return hit
    output, reason = extract_stdin_page(raw, url, request.mode, request.max_chars, wrap)
    if reason is not None:
        raise StdinPageError(f"{STDIN_ORIGIN}: {reason}")
    if cache is not None:
        cache.set(key, str(output))
    return str(output)


def _from_file(request: PageRequest) -> str:
    from enrichment.pipeline.extract.page import ExtractionError
    from enrichment.pipeline.fetch.link_understand import extract_file

    path = request.html_file or ""
    output, reason = extract_file(Path(path).read_bytes(), path.endswith(".gz"), request.mode,
                                  request.base_url, request.max_chars, not request.no_wrap)  # fmt: skip
    if reason is not None:
        raise ExtractionError(reason)
    return str(output)


def _django_cache(ttl_seconds: float) -> PageCache | None:
    """Django's default cache when a settings module is configured; else no cache."""
    if not os.environ.get("DJANGO_SETTINGS_MODULE"):
        return None
    # Stderr is this CLI's one-line error channel (the runner records its tail): the project's
    # LOGGING would put Django's INFO lines there, so logging is off for the run.
    logging.disable(logging.CRITICAL)
    try:
        from django.core.cache import cache

        cache.get("link-understand:probe")  # loads the settings and connects, or fails here
    except Exception:  # a CLI run must not fail because the cache is unavailable
        return None

    from enrichment.pipeline.fetch.webfetch import PageCache

    def lookup(key: str) -> str | None:
        try:
            value = cache.get(key)
        except Exception:  # an unreachable cache is a miss, not a failed run
            return None
        return value if isinstance(value, str) else None

    def store(key: str, value: str) -> None:
        with contextlib.suppress(Exception):
            cache.set(key, value, timeout=ttl_seconds)

    return PageCache(get=lookup, set=store)


if __name__ == "__main__":
    sys.exit(main())
