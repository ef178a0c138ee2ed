"""``link-understand``: print the readable, wrapped content of a web page.

    link-understand --url https://example.com/post [--format text] [--max-chars 8000]
    link-understand --html-file page.html [--base-url https://example.com/] --no-wrap

Stdout gets the page (inside the untrusted-content wrapper unless ``--no-wrap``). On failure
the exit code is 1 and stderr gets one line, ``<origin>: <reason>``. Bad arguments exit 2.

The SSRF policy comes from ``LINK_UNDERSTAND_SSRF_POLICY`` (JSON, camelCase ``ssrfPolicy``
shape, e.g. ``{"allowPrivateNetwork": true}``); without it the strict default applies. The
other ``tools.web.fetch`` settings come from ``LINK_UNDERSTAND_FETCH`` (JSON, the same keys:
``maxChars``, ``maxCharsCap``, ``maxResponseBytes``, ``timeoutSeconds``, ``cacheTtlMinutes``,
``maxRedirects``, ``userAgent``), which a link run sets from the stored config; ``--max-chars``
and ``--timeout`` given on the command line win over it (notes A2: the parameter, then the
config, then the default; maxChars is always capped by ``maxCharsCap``). With
``DJANGO_SETTINGS_MODULE`` set, results are cached in Django's default cache for
``cacheTtlMinutes`` (15 by default; 0 turns the cache off).
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
from typing import Any

from enrichment.pipeline.config.model import WEB_FETCH_INTS, ConfigIssue, WebFetchConfig
from enrichment.pipeline.config.readers import ConfigReader
from enrichment.pipeline.fetch.extraction import ExtractionError, ExtractMode, extract_html
from enrichment.pipeline.fetch.ssrf import DEFAULT_POLICY, SsrfPolicy
from enrichment.pipeline.fetch.webfetch import (
    FetchError,
    FetchResponse,
    PageCache,
    clamp_max_response_bytes,
    compose_page_text,
    fetch_guarded,
    read_page,
)
from enrichment.pipeline.fetch.wrapper import resolve_max_chars, wrap_with_limit

POLICY_ENV = "LINK_UNDERSTAND_SSRF_POLICY"
FETCH_ENV = "LINK_UNDERSTAND_FETCH"


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.base_url and not args.html_file:
        parser.error("--base-url only applies to --html-file")
    try:
        policy = policy_from_env(os.environ.get(POLICY_ENV))
    except ValueError as error:
        parser.error(f"{POLICY_ENV}: {error}")
    try:
        settings = fetch_settings_from_env(os.environ.get(FETCH_ENV))
    except ValueError as error:
        parser.error(f"{FETCH_ENV}: {error}")
    requested = args.max_chars if args.max_chars is not None else settings.max_chars
    max_chars = resolve_max_chars(requested, settings.max_chars_cap)
    if args.timeout is None:
        args.timeout = float(settings.timeout_seconds)
    mode: ExtractMode = args.format
    origin = str(args.html_file) if args.html_file else _origin(args.url)
    try:
        if args.html_file:
            output = _from_file(args, mode, max_chars)
        else:
            output = _from_url(args, policy, settings, mode, max_chars)
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


def fetch_settings_from_env(raw: str | None) -> WebFetchConfig:
    """``{"maxChars": 8000, "userAgent": "Bot/1"}`` -> WebFetchConfig(max_chars=8000, ...),
    validated like the stored config (a bad value names its key)."""
    if not raw or not raw.strip():
        return WebFetchConfig()
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise ValueError(f"not valid JSON ({error.args[0]})") from error
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    # The config's own readers, not the whole config parser: this script starts once per
    # link, so it keeps its imports to what fetching needs.
    issues: list[ConfigIssue] = []
    read = ConfigReader(issues)
    fields: dict[str, Any] = {}
    for key, value in data.items():
        if key in WEB_FETCH_INTS:
            name, minimum = WEB_FETCH_INTS[key]
            fields[name] = read.whole(value, key, minimum)
        elif key == "cacheTtlMinutes":
            fields["cache_ttl_minutes"] = read.real(value, key, 0)
        elif key == "userAgent" and isinstance(value, str) and value.strip():
            fields["user_agent"] = value
        else:
            read.fail(key, "unknown key or bad value")
    if issues:
        raise ValueError("; ".join(str(issue) for issue in issues))
    return WebFetchConfig(**fields)


def fetch_environment(web_fetch: WebFetchConfig) -> dict[str, str]:
    """What a link run puts in the environment of its CLIs so this script fetches with the
    stored ``tools.web.fetch`` settings and SSRF policy."""
    settings = {
        "maxChars": web_fetch.max_chars,
        "maxCharsCap": web_fetch.max_chars_cap,
        "maxResponseBytes": web_fetch.max_response_bytes,
        "timeoutSeconds": web_fetch.timeout_seconds,
        "cacheTtlMinutes": web_fetch.cache_ttl_minutes,
        "maxRedirects": web_fetch.max_redirects,
        "userAgent": web_fetch.user_agent,
    }
    return {
        POLICY_ENV: json.dumps(web_fetch.ssrf_policy.to_dict()),
        FETCH_ENV: json.dumps(settings),
    }


def _from_url(
    args: argparse.Namespace,
    policy: SsrfPolicy,
    settings: WebFetchConfig,
    mode: ExtractMode,
    max_chars: int,
) -> str:
    def fetch(url: str) -> FetchResponse:
        return fetch_guarded(
            url,
            policy=policy,
            timeout_seconds=args.timeout,
            max_redirects=settings.max_redirects,
            max_response_bytes=clamp_max_response_bytes(settings.max_response_bytes),
            user_agent=settings.user_agent,
        )

    # Notes A8: the TTL is round(minutes x 60000) ms, and 0 turns the cache off.
    ttl_seconds = round(settings.cache_ttl_minutes * 60_000) / 1000
    cache = None if args.no_cache or ttl_seconds <= 0 else _django_cache(ttl_seconds)
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


def _django_cache(ttl_seconds: float) -> PageCache | None:
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
            cache.set(key, value, timeout=ttl_seconds)

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
    parser.add_argument(
        "--max-chars", type=_positive_int, help="default: the config's maxChars, else 50000"
    )
    parser.add_argument(
        "--timeout", type=_positive_float, help="seconds (default: the config's, else 30)"
    )
    parser.add_argument("--no-cache", action="store_true", help="bypass the result cache")
    parser.add_argument("--no-wrap", action="store_true", help="print without the wrapper")
    return parser


if __name__ == "__main__":
    sys.exit(main())
