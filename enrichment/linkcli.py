"""``link-understand``: print the readable, wrapped content of a web page.

    link-understand --url https://example.com/post [--format text] [--max-chars 8000]
    link-understand --html-file page.html [--base-url https://example.com/] --no-wrap

Stdout gets the page (inside the untrusted-content wrapper unless ``--no-wrap``). On failure
the exit code is 1 and stderr gets one line, ``<origin>: <reason>``. Bad arguments exit 2.

The SSRF policy comes from ``LINK_UNDERSTAND_SSRF_POLICY`` (JSON, camelCase ``ssrfPolicy``
shape, e.g. ``{"allowPrivateNetwork": true}``); without it the strict default applies. With
``DJANGO_SETTINGS_MODULE`` set, results are cached for 15 minutes in Django's default cache.

Start-up is kept short: the extractor (trafilatura, lxml) loads only when a page is extracted,
and Django only to reach the shared cache, with settings alone (no ``django.setup()``: a cache
needs no installed apps). The server runs the same code in-process for the bare command name
(``enrichment.pipeline.link_understand``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from enrichment.pipeline.link_understand import (
    CACHE_TTL_SECONDS,
    PageRequest,
    build_parser,
    page_output,
    parse_request,
)
from enrichment.pipeline.ssrf import DEFAULT_POLICY, SsrfPolicy

if TYPE_CHECKING:
    from enrichment.pipeline.extraction import ExtractMode
    from enrichment.pipeline.webfetch import FetchResponse, PageCache

POLICY_ENV = "LINK_UNDERSTAND_SSRF_POLICY"
__all__ = ["CACHE_TTL_SECONDS", "POLICY_ENV", "main", "policy_from_env"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    request = parse_request(parser, sys.argv[1:] if argv is None else argv)
    try:
        policy = policy_from_env(os.environ.get(POLICY_ENV))
    except ValueError as error:
        parser.error(f"{POLICY_ENV}: {error}")
    # Imported only now: --help and bad arguments need neither httpx nor the extractor.
    from enrichment.pipeline.extraction import ExtractionError
    from enrichment.pipeline.webfetch import FetchError

    try:
        output = _from_file(request) if request.html_file else _from_url(request, policy)
    except (FetchError, ExtractionError) as error:
        print(f"{request.origin}: {error.reason}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"{request.origin}: {error.strerror or error}", file=sys.stderr)
        return 1
    sys.stdout.write(output + "\n")
    return 0


def policy_from_env(raw: str | None) -> SsrfPolicy:
    """``{"allowedHostnames": ["127.0.0.1"]}`` -> SsrfPolicy(allowed_hostnames=("127.0.0.1",))."""
    if not raw or not raw.strip():
        return DEFAULT_POLICY
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise ValueError(f"not valid JSON ({error.args[0]})") from error
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    return SsrfPolicy.from_dict(data)


def _from_url(request: PageRequest, policy: SsrfPolicy) -> str:
    from enrichment.pipeline.webfetch import fetch_guarded, read_page

    def fetch(url: str) -> FetchResponse:
        return fetch_guarded(url, policy=policy, timeout_seconds=request.timeout)

    mode: ExtractMode = request.mode
    cache = None if request.no_cache else _django_cache()
    result = read_page(
        request.url or "",
        policy=policy,
        mode=mode,
        max_chars=request.max_chars,
        cache=cache,
        fetch=fetch,
    )
    return page_output(result, request)


def _from_file(request: PageRequest) -> str:
    from enrichment.pipeline.extraction import ExtractionError
    from enrichment.pipeline.link_understand import extract_file

    path = request.html_file or ""
    output, reason = extract_file(Path(path).read_bytes(), path.endswith(".gz"), request.mode,
                                  request.base_url, request.max_chars, not request.no_wrap)  # fmt: skip
    if reason is not None:
        raise ExtractionError(reason)
    return str(output)


def _django_cache() -> PageCache | None:
    """Django's default cache when a settings module is configured; else no cache."""
    if not os.environ.get("DJANGO_SETTINGS_MODULE"):
        return None
    try:
        from django.core.cache import cache

        cache.get("link-understand:probe")  # loads the settings and connects, or fails here
    except Exception:  # a CLI run must not fail because the cache is unavailable
        return None

    from enrichment.pipeline.webfetch import PageCache

    def store(key: str, value: str) -> None:
        cache.set(key, value, timeout=CACHE_TTL_SECONDS)

    return PageCache(get=cache.get, set=store)


if __name__ == "__main__":
    sys.exit(main())
