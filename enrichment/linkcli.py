"""``link-understand``: print the readable, wrapped content of a web page.

    link-understand --url https://example.com/post [--format text] [--max-chars 8000]
    link-understand --html-file page.html [--base-url https://example.com/] --no-wrap

Stdout gets the page (inside the untrusted-content wrapper unless ``--no-wrap``). On failure
the exit code is 1 and stderr gets one line, ``<origin>: <reason>``. Bad arguments exit 2.

The SSRF policy comes from ``LINK_UNDERSTAND_SSRF_POLICY`` (JSON, camelCase ``ssrfPolicy``
shape, e.g. ``{"allowPrivateNetwork": true}``); without it the strict default applies. With
``DJANGO_SETTINGS_MODULE`` set, results are cached for 15 minutes in Django's default cache.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from enrichment.pipeline.extraction import ExtractionError, ExtractMode, extract_html
from enrichment.pipeline.ssrf import DEFAULT_POLICY, SsrfPolicy
from enrichment.pipeline.webfetch import (
    FetchError,
    FetchResponse,
    PageCache,
    compose_page_text,
    fetch_guarded,
    read_page,
)
from enrichment.pipeline.wrapper import resolve_max_chars, wrap_with_limit

POLICY_ENV = "LINK_UNDERSTAND_SSRF_POLICY"
CACHE_TTL_SECONDS = 15 * 60


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.base_url and not args.html_file:
        parser.error("--base-url only applies to --html-file")
    try:
        policy = policy_from_env(os.environ.get(POLICY_ENV))
    except ValueError as error:
        parser.error(f"{POLICY_ENV}: {error}")
    max_chars = resolve_max_chars(args.max_chars)
    mode: ExtractMode = args.format
    origin = str(args.html_file) if args.html_file else _origin(args.url)
    try:
        if args.html_file:
            output = _from_file(args, mode, max_chars)
        else:
            output = _from_url(args, policy, mode, max_chars)
    except (FetchError, ExtractionError) as error:
        print(f"{origin}: {error.reason}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"{origin}: {error.strerror or error}", file=sys.stderr)
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


def _from_url(
    args: argparse.Namespace, policy: SsrfPolicy, mode: ExtractMode, max_chars: int
) -> str:
    def fetch(url: str) -> FetchResponse:
        return fetch_guarded(url, policy=policy, timeout_seconds=args.timeout)

    cache = None if args.no_cache else _django_cache()
    result = read_page(
        args.url, policy=policy, mode=mode, max_chars=max_chars, cache=cache, fetch=fetch
    )
    return result.content[:max_chars] if args.no_wrap else result.text


def _from_file(args: argparse.Namespace, mode: ExtractMode, max_chars: int) -> str:
    raw = Path(args.html_file).read_bytes()
    if args.html_file.endswith(".gz"):
        raw = gzip.decompress(raw)
    extracted = extract_html(raw, None, mode=mode, base_url=args.base_url)
    content = compose_page_text(extracted, mode)
    return content[:max_chars] if args.no_wrap else wrap_with_limit(content, max_chars).text


def _django_cache() -> PageCache | None:
    """Django's default cache when a settings module is configured; else no cache."""
    if not os.environ.get("DJANGO_SETTINGS_MODULE"):
        return None
    # Stderr is this CLI's one-line error channel (the runner records its tail): the project's
    # LOGGING would put Django's and httpx's INFO lines there, so logging is off for the run.
    logging.disable(logging.CRITICAL)
    try:
        import django
        from django.core.cache import cache

        django.setup()
    except Exception:  # a CLI run must not fail because the cache is unavailable
        return None

    def lookup(key: str) -> str | None:
        try:
            value = cache.get(key)
        except Exception:  # an unreachable cache is a miss, not a failed run
            return None
        return value if isinstance(value, str) else None

    def store(key: str, value: str) -> None:
        with contextlib.suppress(Exception):
            cache.set(key, value, timeout=CACHE_TTL_SECONDS)

    return PageCache(get=lookup, set=store)


def _origin(url: str) -> str:
    scheme, separator, rest = url.strip().partition("://")
    if not separator:
        return url.strip()
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    return f"{scheme.lower()}://{authority}"


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


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="link-understand",
        description="Fetch a web page through the SSRF guard and print its main content.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--url", help="http(s) URL to fetch")
    source.add_argument("--html-file", help="extract a local .html (or .html.gz) file")
    parser.add_argument("--base-url", help="URL the --html-file was served from")
    parser.add_argument("--format", choices=("markdown", "text"), default="markdown")
    parser.add_argument("--max-chars", type=_positive_int, help="default 50000 (also the cap)")
    parser.add_argument("--timeout", type=_positive_float, default=30.0, help="seconds")
    parser.add_argument("--no-cache", action="store_true", help="bypass the result cache")
    parser.add_argument("--no-wrap", action="store_true", help="print without the wrapper")
    return parser


if __name__ == "__main__":
    sys.exit(main())
