"""The parts of a URL the pipeline reads, with its one URL parser (ada_url, as the SSRF
guard parses them), so a host is written the same way in decisions, dry runs and charts."""

from __future__ import annotations

import functools

import ada_url

from enrichment.pipeline.net.ssrf import normalize_hostname


@functools.lru_cache(maxsize=65_536)
def scheme_and_host(url: str) -> tuple[str, str] | None:
    """``("https:", "example.com")``, or None for a URL that does not parse."""
    try:
        parsed = ada_url.URL(url)
        return parsed.protocol, normalize_hostname(parsed.hostname)
    except (ValueError, UnicodeError):
        return None


def url_host(url: str) -> str | None:
    parsed = scheme_and_host(url)
    return parsed[1] if parsed else None


def display_host(url: str) -> str:
    """The host as charts and the run page show it."""
    return url_host(url) or "(unparseable URL)"
