"""Page reading: fetch + extract + wrap, behind an optional cache.

The guarded fetch itself — pinned DNS, redirects re-checked, the body capped, one deadline —
is ``enrichment.pipeline.net.http``; ``read_page`` uses its blocking door (the console script),
the server its async one (``link_understand_run``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from enrichment.pipeline.fetch.wrapper import wrap_with_limit
from enrichment.pipeline.net.http import FetchResponse, fetch_guarded, guard_url
from enrichment.pipeline.net.ssrf import (
    Resolver,
    SsrfPolicy,
    system_resolve,
)

if TYPE_CHECKING:  # extraction (trafilatura, lxml) loads only where pages are extracted
    from enrichment.pipeline.extract.page import ExtractedContent, ExtractMode


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
    material = f"{url.strip()}\n{mode}\n{max_chars}\n{_policy_text(policy)}"
    return f"link-understand:{hashlib.sha256(material.encode()).hexdigest()}"


@functools.lru_cache(maxsize=64)
def _policy_text(policy: SsrfPolicy) -> str:
    """The policy's part of a cache key (a server asks for the same few policies each time)."""
    return json.dumps(policy.to_dict(), sort_keys=True)


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
    from enrichment.pipeline.extract.decode import media_type_of

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
    from enrichment.pipeline.extract.page import ExtractedContent, ExtractionError, extract_content

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
    from enrichment.pipeline.extract.decode import strip_invisible
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
