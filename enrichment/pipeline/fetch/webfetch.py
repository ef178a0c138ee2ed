"""Fetch results, response limits and page reading (fetch + extract + wrap, behind a cache).

The guarded fetch itself — pinned DNS, redirects re-checked, the body capped, one deadline —
lives in ``webfetch_async`` and runs on an event loop; ``fetch_guarded`` and ``guard_url`` here
are its blocking doors (the console script, tests), so there is one implementation.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from enrichment.pipeline.fetch.ssrf import (
    Resolver,
    SsrfPolicy,
    system_resolve,
)
from enrichment.pipeline.fetch.wrapper import wrap_with_limit

if TYPE_CHECKING:  # extraction (trafilatura, lxml) loads only where pages are extracted
    from enrichment.pipeline.fetch.extraction import ExtractedContent, ExtractMode

DEFAULT_USER_AGENT = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7_2) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36"
)
ACCEPT = "text/markdown, text/html;q=0.9, */*;q=0.1"
ACCEPT_LANGUAGE = "en-US,en;q=0.9"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
SENSITIVE_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "cookie2"})
DEFAULT_MAX_RESPONSE_BYTES = 2_000_000
MIN_RESPONSE_BYTES = 32_000
MAX_RESPONSE_BYTES = 10_000_000

Clock = Callable[[], float]
T = TypeVar("T")


class FetchError(Exception):
    """A fetch that did not produce a usable response; ``reason`` is short and stable."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class FetchResponse:
    final_url: str
    status: int
    headers: tuple[tuple[str, str], ...]  # (lower-cased name, value), in received order
    body: bytes
    truncated: bool  # the body was cut at max_response_bytes
    warnings: tuple[str, ...]
    address: str  # the IP address the final hop was connected to

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)

    @property
    def content_type(self) -> str | None:
        return self.header("content-type")


def clamp_max_response_bytes(value: float | None) -> int:
    """Notes A2: floor, clamp to [32,000, 10,000,000]; missing, non-finite or <= 0 -> default."""
    if value is None or not math.isfinite(value) or value <= 0:
        return DEFAULT_MAX_RESPONSE_BYTES
    return min(MAX_RESPONSE_BYTES, max(MIN_RESPONSE_BYTES, math.floor(value)))


def fetch_guarded(
    url: str,
    *,
    policy: SsrfPolicy,
    resolve: Resolver = system_resolve,
    max_redirects: int = 3,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    timeout_seconds: float = 30,
    user_agent: str = DEFAULT_USER_AGENT,
    extra_headers: Mapping[str, str] | None = None,
    clock: Clock = time.monotonic,
) -> FetchResponse:
    """GET ``url`` through the SSRF guard; raises FetchError with a short reason.

    The blocking door of ``webfetch_async.fetch_guarded_async`` (the one implementation): it
    runs on an event loop of its own, so it must not be called from a running loop's thread.
    One deadline (``timeout_seconds``) covers DNS, every hop and reading the body.
    """
    from enrichment.pipeline.fetch.webfetch_async import fetch_guarded_async

    return run_blocking(
        fetch_guarded_async(
            url,
            policy=policy,
            resolve=resolve,
            max_redirects=max_redirects,
            max_response_bytes=max_response_bytes,
            timeout_seconds=timeout_seconds,
            user_agent=user_agent,
            extra_headers=extra_headers,
            clock=clock,
        )
    )


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on an event loop of its own and return its result.

    Unlike ``asyncio.run`` it does not wait for the loop's threads on the way out: a DNS
    lookup that outlived the deadline (getaddrinfo cannot be interrupted) finishes in its
    thread while the caller already has its "timed out" answer.
    """
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()  # shuts the default executor down without waiting


def parse_url(raw: str) -> httpx.URL:
    """An http(s) URL with a host, or FetchError("Invalid URL: must be http or https")."""
    try:
        url = httpx.URL(raw.strip())
    except (httpx.InvalidURL, TypeError) as error:
        raise FetchError("Invalid URL: must be http or https") from error
    if url.scheme not in ("http", "https") or not url.host:
        raise FetchError("Invalid URL: must be http or https")
    return url


def origin_of(url: httpx.URL) -> tuple[str, str, int | None]:
    default_port = {"http": 80, "https": 443}.get(url.scheme)
    return (url.scheme, url.host.lower(), url.port or default_port)


class Deadline:
    """One budget for the whole operation (DNS, all hops, body)."""

    def __init__(self, clock: Clock, seconds: float) -> None:
        self._clock = clock
        self._seconds = seconds
        self._ends_at = clock() + seconds

    def remaining(self) -> float:
        return self._ends_at - self._clock()

    def expired_error(self) -> FetchError:
        return FetchError(f"timed out after {self._seconds:g}s")


# --- page reading: fetch + extract + wrap, behind an optional cache ---------------------------


@dataclass(frozen=True)
class PageCache:
    """Tiny cache protocol so this module stays pure; the TTL is the owner's business."""

    get: Callable[[str], str | None]
    set: Callable[[str, str], None]


@dataclass(frozen=True)
class PageResult:
    url: str
    final_url: str
    status: int
    content_type: str
    title: str | None
    extract_mode: ExtractMode
    extractor: str
    content: str  # extracted text, unwrapped and uncut
    text: str  # ``content`` wrapped and cut to max_chars
    truncated: bool
    raw_length: int
    warnings: tuple[str, ...]
    cached: bool = False


def page_cache_key(url: str, mode: ExtractMode, max_chars: int, policy: SsrfPolicy) -> str:
    """Distinct per URL, mode, maxChars and SSRF policy; hashed so any backend accepts it.

    The policy is part of the key: a page fetched under ``allowPrivateNetwork`` must not be
    served once the policy is tightened.
    """
    policy_text = json.dumps(policy.to_dict(), sort_keys=True)
    material = f"{url.strip()}\n{mode}\n{max_chars}\n{policy_text}"
    return f"link-understand:{hashlib.sha256(material.encode()).hexdigest()}"


def guard_url(
    url: str, *, policy: SsrfPolicy, resolve: Resolver = system_resolve, timeout_seconds: float = 30
) -> None:
    """Raise FetchError when ``url`` is not a fetchable http(s) URL or the SSRF guard blocks it
    now (its name resolves to a blocked address today, whatever it resolved to when cached)."""
    from enrichment.pipeline.fetch.webfetch_async import guard_url_async

    run_blocking(
        guard_url_async(url, policy=policy, resolve=resolve, timeout_seconds=timeout_seconds)
    )


def read_page(
    url: str,
    *,
    policy: SsrfPolicy,
    mode: ExtractMode = "markdown",
    max_chars: int = 50_000,
    cache: PageCache | None = None,
    fetch: Callable[[str], FetchResponse] | None = None,
    resolve: Resolver = system_resolve,
) -> PageResult:
    """Fetch ``url`` (``fetch`` defaults to fetch_guarded with ``policy``), extract, wrap.

    Raises FetchError or ExtractionError; only successful results are cached. The SSRF guard
    runs before the cache is asked, so no cached page is served for a URL blocked now.
    """
    key = page_cache_key(url, mode, max_chars, policy)
    if cache is not None:
        guard_url(url, policy=policy, resolve=resolve)
        hit = cache.get(key)
        if hit is not None:
            return page_result_from_cache(hit)
    response = fetch(url) if fetch is not None else fetch_guarded(url, policy=policy)
    result = page_result_from_response(url, response, mode, max_chars)
    if cache is not None:
        cache.set(key, page_result_to_cache(result))
    return result


def page_result_from_cache(stored_json: str) -> PageResult:
    """A cached entry back to a PageResult marked ``cached``."""
    stored = json.loads(stored_json)
    stored["warnings"] = tuple(stored["warnings"])
    return replace(PageResult(**stored), cached=True)


def page_result_to_cache(result: PageResult) -> str:
    return json.dumps(asdict(result))


def page_result_from_response(
    url: str, response: FetchResponse, mode: ExtractMode, max_chars: int
) -> PageResult:
    """Extract, compose and wrap a fetched body: the CPU-bound half of ``read_page`` (the
    in-process fetcher runs it in its extraction pool). Raises ExtractionError."""
    from enrichment.pipeline.fetch.extraction import media_type_of

    extracted = _extract_response(response, mode)
    content = compose_page_text(extracted, mode)
    wrapped = wrap_with_limit(content, max_chars)
    return PageResult(
        url=url,
        final_url=response.final_url,
        status=response.status,
        content_type=media_type_of(response.content_type) or "application/octet-stream",
        title=extracted.title,
        extract_mode=mode,
        extractor=extracted.extractor,
        content=content,
        text=wrapped.text,
        truncated=wrapped.truncated,
        raw_length=wrapped.raw_length,
        warnings=response.warnings,
    )


def _extract_response(response: FetchResponse, mode: ExtractMode) -> ExtractedContent:
    """Extract by Content-Type. A response without one is returned as its text, as the
    reference does with an untyped body (notes A5 step 3: ``application/octet-stream``,
    extractor ``raw``), whenever the bytes read as text (UTF-16, UTF-8 or CP1252, mostly
    printable: the file extractor's test); bytes that are not text still fail.

    We first try what the body looks like (HTML is extracted, plain UTF-8 kept): only when
    that finds nothing does the untyped body stand for itself, e.g. ``caf\xe9 ok`` in
    CP1252 or an HTML shell with no readable text."""
    from enrichment.pipeline.fetch.extraction import (
        ExtractedContent,
        ExtractionError,
        extract_content,
    )

    try:
        return extract_content(
            response.body, response.content_type, mode=mode, base_url=response.final_url
        )
    except ExtractionError:
        if response.content_type is not None:
            raise
        text = _untyped_text(response.body)
        if text is None:
            raise
        return ExtractedContent(text, None, "raw", "application/octet-stream")


def _untyped_text(body: bytes) -> str | None:
    from enrichment.pipeline.fetch.extraction import strip_invisible
    from enrichment.pipeline.files.encodings import decode_text, detect_text_encoding
    from enrichment.pipeline.files.extraction import sniff_binary_magic

    if sniff_binary_magic(body) is not None:
        return None
    encoding = detect_text_encoding(body)
    if encoding is None:
        return None
    return strip_invisible(decode_text(body, encoding)).strip() or None


def compose_page_text(extracted: ExtractedContent, mode: ExtractMode) -> str:
    """Put the page title first (as a heading in markdown) unless the text already opens
    with it."""
    title = extracted.title
    first_line = extracted.text.split("\n", 1)[0]
    if not title or re.findall(r"\w+", first_line.lower()) == re.findall(r"\w+", title.lower()):
        return extracted.text
    heading = f"# {title}" if mode == "markdown" else title
    return f"{heading}\n\n{extracted.text}"
