"""How a link run hands the stored ``tools.web.fetch`` settings to a ``link-understand``
subprocess: two environment variables, JSON in the config's own camelCase shape, written by
the server (``fetch_environment``) and read back by the script (``policy_from_env``,
``fetch_settings_from_env``)::

    fetch_environment(WebFetchConfig(max_chars=8000))
    -> {"LINK_UNDERSTAND_SSRF_POLICY": "{...}", "LINK_UNDERSTAND_FETCH": "{\"maxChars\": 8000, ...}"}
"""

from __future__ import annotations

import json
from typing import Any

from enrichment.pipeline.config.model import WEB_FETCH_INTS, ConfigIssue, WebFetchConfig
from enrichment.pipeline.config.readers import ConfigReader
from enrichment.pipeline.net.ssrf import DEFAULT_POLICY, SsrfPolicy

POLICY_ENV = "LINK_UNDERSTAND_SSRF_POLICY"
FETCH_ENV = "LINK_UNDERSTAND_FETCH"


def _json_object(raw: str) -> dict[str, object]:
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise ValueError(f"not valid JSON ({error.args[0]})") from error
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    return data


def policy_from_env(raw: str | None) -> SsrfPolicy:
    """``{"allowedHostnames": ["127.0.0.1"]}`` -> SsrfPolicy(allowed_hostnames=("127.0.0.1",))."""
    if not raw or not raw.strip():
        return DEFAULT_POLICY
    return SsrfPolicy.from_dict(_json_object(raw))


def fetch_settings_from_env(raw: str | None) -> WebFetchConfig:
    """``{"maxChars": 8000, "userAgent": "Bot/1"}`` -> WebFetchConfig(max_chars=8000, ...),
    validated like the stored config (a bad value names its key)."""
    if not raw or not raw.strip():
        return WebFetchConfig()
    data = _json_object(raw)
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
