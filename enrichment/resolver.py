"""DNS for the SSRF check. Every caller looks ``resolve_host`` up here at each call, so the
demo seeder and the tests can answer for made-up names in one place."""

from __future__ import annotations

from enrichment.pipeline.net.ssrf import system_resolve


def resolve_host(host: str) -> list[str]:
    return system_resolve(host)
