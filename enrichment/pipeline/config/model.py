"""The enrichment configuration: frozen values of the OpenClaw-shaped document.

``config_parser.parse_config`` reads a document into these values (reporting every
problem with its JSON path); ``config_to_dict`` writes the same camelCase shape back;
parse -> to_dict -> parse gives an equal ``Config``.

``tools.media`` and the tool-policy keys (``profile``, ``allow``, ``alsoAllow``, ``deny``,
``byProvider``) are kept as opaque, JSON-checked values here; their own parsers live elsewhere.

Per-agent blocks override the global one key by key (``effective_links_config``): a key
present in ``agents.list[].tools.links`` replaces the global value, and ``scope`` and
``models`` are replaced whole, never merged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from enrichment.pipeline.config.readers import ConfigIssue as ConfigIssue  # re-exported
from enrichment.pipeline.config.readers import Number, json_copy
from enrichment.pipeline.config.scope import ScopeConfig, scope_to_dict
from enrichment.pipeline.net.ssrf import SsrfPolicy

DEFAULT_MAX_LINKS = 3
DEFAULT_TIMEOUT_SECONDS = 30
DEFAULT_USER_AGENT = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7_2) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36"
)
TOOL_POLICY_KEYS = ("profile", "allow", "alsoAllow", "deny", "byProvider")
LINKS_FIELDS = {
    "enabled": "enabled",
    "maxLinks": "max_links",
    "timeoutSeconds": "timeout_seconds",
    "concurrency": "concurrency",
    "scope": "scope",
    "models": "models",
}
WEB_FETCH_INTS = {  # key -> (field, minimum)
    "maxChars": ("max_chars", 1),
    "maxCharsCap": ("max_chars_cap", 1),
    "maxResponseBytes": ("max_response_bytes", 1),
    "timeoutSeconds": ("timeout_seconds", 1),
    "maxRedirects": ("max_redirects", 0),
}


@dataclass(frozen=True)
class LinkModel:
    """One CLI entry: ``argv = [command, *templated args]``."""

    command: str
    args: tuple[str, ...] = ()
    timeout_seconds: Number | None = None  # None: use the links block's timeout
    type: Literal["cli"] = "cli"


@dataclass(frozen=True)
class LinksConfig:
    enabled: bool | None = None  # None: enabled exactly when models are configured
    max_links: int = DEFAULT_MAX_LINKS
    timeout_seconds: Number = DEFAULT_TIMEOUT_SECONDS
    concurrency: int | None = None  # None: max_links
    scope: ScopeConfig | None = None
    models: tuple[LinkModel, ...] = ()

    @property
    def is_enabled(self) -> bool:
        return self.enabled if self.enabled is not None else bool(self.models)

    @property
    def effective_concurrency(self) -> int:
        return self.concurrency if self.concurrency is not None else self.max_links


@dataclass(frozen=True)
class LinksOverride:
    """An agent's ``tools.links`` block; ``None`` means the key is absent."""

    enabled: bool | None = None
    max_links: int | None = None
    timeout_seconds: Number | None = None
    concurrency: int | None = None
    scope: ScopeConfig | None = None
    models: tuple[LinkModel, ...] | None = None


@dataclass(frozen=True)
class WebFetchConfig:
    """``tools.web.fetch`` as written; the fetcher applies its own clamps."""

    max_chars: int = 50_000
    max_chars_cap: int = 50_000
    max_response_bytes: int = 2_000_000
    timeout_seconds: int = 30
    cache_ttl_minutes: Number = 15
    max_redirects: int = 3
    user_agent: str = DEFAULT_USER_AGENT
    ssrf_policy: SsrfPolicy = field(default_factory=SsrfPolicy)


@dataclass(frozen=True)
class AgentConfig:
    id: str
    links: LinksOverride | None = None
    media: dict[str, Any] | None = None
    tool_policy: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Config:
    links: LinksConfig = field(default_factory=LinksConfig)
    web_fetch: WebFetchConfig = field(default_factory=WebFetchConfig)
    media: dict[str, Any] | None = None
    tool_policy: dict[str, Any] = field(default_factory=dict)
    agents: tuple[AgentConfig, ...] = ()


class ConfigError(ValueError):
    def __init__(self, errors: Sequence[ConfigIssue]) -> None:
        self.errors = list(errors)
        super().__init__("; ".join(str(issue) for issue in self.errors))


def default_config() -> Config:
    """What a fresh install ships: the built-in ``link-understand`` CLI."""
    model = LinkModel("link-understand", ("--url", "{{LinkUrl}}", "--format", "markdown"))
    return Config(links=LinksConfig(models=(model,)))


# --- writing and merging --------------------------------------------------------------------


def config_to_dict(config: Config) -> dict[str, Any]:
    """The OpenClaw camelCase document for ``config``."""
    tools: dict[str, Any] = {
        "links": _links_to_dict(config.links),
        "web": {"fetch": _web_fetch_to_dict(config.web_fetch)},
    }
    if config.media is not None:
        tools["media"] = json_copy(config.media)
    tools.update(json_copy(config.tool_policy))
    return {"tools": tools, "agents": {"list": [_agent_to_dict(agent) for agent in config.agents]}}


def _links_to_dict(links: LinksConfig | LinksOverride) -> dict[str, Any]:
    """Write the links keys whose value is set (None = absent / derived default)."""
    result: dict[str, Any] = {}
    for key, name in LINKS_FIELDS.items():
        value = getattr(links, name)
        if value is None:
            continue
        if name == "scope":
            value = scope_to_dict(value)
        elif name == "models":
            value = [_model_to_dict(model) for model in value]
        result[key] = value
    return result


def _model_to_dict(model: LinkModel) -> dict[str, Any]:
    result: dict[str, Any] = {
        "type": model.type,
        "command": model.command,
        "args": list(model.args),
    }
    if model.timeout_seconds is not None:
        result["timeoutSeconds"] = model.timeout_seconds
    return result


def _web_fetch_to_dict(web_fetch: WebFetchConfig) -> dict[str, Any]:
    result: dict[str, Any] = {
        key: getattr(web_fetch, name) for key, (name, _minimum) in WEB_FETCH_INTS.items()
    }
    result["cacheTtlMinutes"] = web_fetch.cache_ttl_minutes
    result["userAgent"] = web_fetch.user_agent
    result["ssrfPolicy"] = web_fetch.ssrf_policy.to_dict()
    return result


def _agent_to_dict(agent: AgentConfig) -> dict[str, Any]:
    tools: dict[str, Any] = {}
    if agent.links is not None:
        tools["links"] = _links_to_dict(agent.links)
    if agent.media is not None:
        tools["media"] = json_copy(agent.media)
    tools.update(json_copy(agent.tool_policy))
    return {"id": agent.id, "tools": tools}


def merge_override(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Key-by-key override of one config block (camelCase dicts); values are replaced whole."""
    return {**base, **override}


def _find_agent(config: Config, agent_id: str | None) -> AgentConfig | None:
    return next((agent for agent in config.agents if agent.id == agent_id), None)


def effective_links_config(config: Config, agent_id: str | None) -> LinksConfig:
    """The global links block with the agent's keys laid over it (scope/models whole)."""
    agent = _find_agent(config, agent_id)
    if agent is None or agent.links is None:
        return config.links
    present = {
        name: value
        for name in LINKS_FIELDS.values()
        if (value := getattr(agent.links, name)) is not None
    }
    return dataclasses.replace(config.links, **present)


def effective_media_config(config: Config, agent_id: str | None) -> dict[str, Any] | None:
    """Same idea for the still-opaque ``tools.media`` block."""
    agent = _find_agent(config, agent_id)
    if agent is None or agent.media is None:
        return config.media
    return merge_override(config.media or {}, agent.media)
