"""The ``tools.web.fetch`` section: limits of the built-in fetcher and its SSRF policy."""

from __future__ import annotations

from typing import Any

from enrichment.pipeline.config.model import WEB_FETCH_INTS, WebFetchConfig
from enrichment.pipeline.config.readers import ConfigReader
from enrichment.pipeline.net.ssrf import SsrfPolicy

WEB_FETCH_KEYS = frozenset({*WEB_FETCH_INTS, "cacheTtlMinutes", "userAgent", "ssrfPolicy"})


def parse_web(read: ConfigReader, value: object, path: str) -> WebFetchConfig:
    """``tools.web``: only ``fetch`` is known."""
    web = read.json_object(value, path)
    if web is None:
        return WebFetchConfig()
    read.mapping(web, path, frozenset({"fetch"}))
    return parse_web_fetch(read, web.get("fetch", {}), f"{path}.fetch")


def parse_web_fetch(read: ConfigReader, value: object, path: str) -> WebFetchConfig:
    block = read.json_object(value, path)
    if block is None:
        return WebFetchConfig()
    read.mapping(block, path, WEB_FETCH_KEYS)
    fields: dict[str, Any] = {}
    for key, (name, minimum) in WEB_FETCH_INTS.items():
        if key in block:
            fields[name] = read.whole(block[key], f"{path}.{key}", minimum)
    if "cacheTtlMinutes" in block:
        fields["cache_ttl_minutes"] = read.real(
            block["cacheTtlMinutes"], f"{path}.cacheTtlMinutes", 0
        )
    if "userAgent" in block:
        agent = block["userAgent"]
        if isinstance(agent, str) and agent.strip():
            fields["user_agent"] = agent
        else:
            read.fail(f"{path}.userAgent", "must be a non-empty string")
    if "ssrfPolicy" in block:
        fields["ssrf_policy"] = _ssrf_policy(read, block["ssrfPolicy"], f"{path}.ssrfPolicy")
    return WebFetchConfig(**{name: value for name, value in fields.items() if value is not None})


def _ssrf_policy(read: ConfigReader, value: object, path: str) -> SsrfPolicy | None:
    raw = read.json_object(value, path)
    if raw is None:
        return None
    try:
        return SsrfPolicy.from_dict(raw)
    except ValueError as error:
        read.fail(path, str(error))
        return None
