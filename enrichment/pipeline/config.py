"""The enrichment configuration: frozen values parsed from the OpenClaw-shaped document.

``parse_config`` validates the whole document and reports *every* problem at once as a
``ConfigError`` whose ``errors`` name their JSON path, e.g.
``tools.links.scope.rules[2].match.chatType: unknown chat type "room"``. ``config_to_dict``
writes the same camelCase shape back; parse -> to_dict -> parse gives an equal ``Config``.

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

from enrichment.pipeline.config_readers import (
    Number,
    json_copy,
    json_issues,
    read_bool,
    read_int,
    read_number,
    read_object,
)
from enrichment.pipeline.media_config import parse_media_config
from enrichment.pipeline.policy import parse_tool_policy
from enrichment.pipeline.scope import ConfigIssue as ConfigIssue  # re-exported
from enrichment.pipeline.scope import (
    ScopeConfig,
    parse_scope,
    scope_to_dict,
    unknown_key_issues,
)
from enrichment.pipeline.ssrf import SsrfPolicy
from enrichment.pipeline.templates import find_template_errors

DEFAULT_MAX_LINKS = 3
DEFAULT_TIMEOUT_SECONDS = 30
DEFAULT_USER_AGENT = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7_2) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36"
)
TOOL_POLICY_KEYS = ("profile", "allow", "alsoAllow", "deny", "byProvider")
_LINKS_FIELDS = {
    "enabled": "enabled",
    "maxLinks": "max_links",
    "timeoutSeconds": "timeout_seconds",
    "concurrency": "concurrency",
    "scope": "scope",
    "models": "models",
}
_MODEL_KEYS = frozenset({"type", "command", "args", "timeoutSeconds"})
_WEB_FETCH_INTS = {  # key -> (field, minimum)
    "maxChars": ("max_chars", 1),
    "maxCharsCap": ("max_chars_cap", 1),
    "maxResponseBytes": ("max_response_bytes", 1),
    "timeoutSeconds": ("timeout_seconds", 1),
    "maxRedirects": ("max_redirects", 0),
}
_WEB_FETCH_KEYS = frozenset({*_WEB_FETCH_INTS, "cacheTtlMinutes", "userAgent", "ssrfPolicy"})
_TOOLS_KEYS = frozenset({"links", "media", "web", *TOOL_POLICY_KEYS})
_AGENT_TOOLS_KEYS = frozenset({"links", "media", *TOOL_POLICY_KEYS})


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


# --- parsing ----------------------------------------------------------------------------------


def parse_config(doc: Mapping[str, object]) -> Config:
    """Validate and convert a whole config document; raise ``ConfigError`` listing all issues."""
    issues: list[ConfigIssue] = []
    config = Config()
    root = read_object(doc, "config", issues)
    if root is not None:
        issues.extend(unknown_key_issues(root, frozenset({"tools", "agents"}), "config"))
        config = _parse_tools(root.get("tools", {}), issues)
        agents = _parse_agents(root.get("agents", {}), issues)
        config = dataclasses.replace(config, agents=agents)
    if issues:
        raise ConfigError(issues)
    return config


def _parse_tools(value: object, issues: list[ConfigIssue]) -> Config:
    tools = read_object(value, "tools", issues)
    if tools is None:
        return Config()
    issues.extend(unknown_key_issues(tools, _TOOLS_KEYS, "tools"))
    links = LinksConfig(**_parse_links_block(tools.get("links", {}), "tools.links", issues))
    web_fetch = WebFetchConfig()
    web = read_object(tools.get("web", {}), "tools.web", issues)
    if web is not None:
        issues.extend(unknown_key_issues(web, frozenset({"fetch"}), "tools.web"))
        web_fetch = _parse_web_fetch(web.get("fetch", {}), "tools.web.fetch", issues)
    return Config(
        links=links,
        web_fetch=web_fetch,
        media=_opaque_object(tools, "media", "tools", issues),
        tool_policy=_tool_policy(tools, "tools", issues),
    )


def _parse_links_block(value: object, path: str, issues: list[ConfigIssue]) -> dict[str, Any]:
    """The keys present in a links block, as dataclass field values."""
    block = read_object(value, path, issues)
    if block is None:
        return {}
    issues.extend(unknown_key_issues(block, frozenset(_LINKS_FIELDS), path))
    fields: dict[str, Any] = {}
    for key, raw in block.items():
        if key in _LINKS_FIELDS:
            parsed = _links_value(key, raw, f"{path}.{key}", issues)
            if parsed is not None:
                fields[_LINKS_FIELDS[key]] = parsed
    return fields


def _links_value(key: str, value: object, path: str, issues: list[ConfigIssue]) -> object:
    if key == "enabled":
        return read_bool(value, path, issues)
    if key in ("maxLinks", "concurrency"):
        return read_int(value, path, 1, issues)
    if key == "timeoutSeconds":
        return read_number(value, path, 1, issues)
    if key == "scope":
        return _scope(value, path, issues)
    return _models(value, path, issues)


def _scope(value: object, path: str, issues: list[ConfigIssue]) -> ScopeConfig | None:
    scope, scope_issues = parse_scope(value, path)
    issues.extend(scope_issues)
    return scope


def _models(value: object, path: str, issues: list[ConfigIssue]) -> tuple[LinkModel, ...] | None:
    if not isinstance(value, list):
        issues.append(ConfigIssue(path, "must be a list"))
        return None
    models = [_model(item, f"{path}[{index}]", issues) for index, item in enumerate(value)]
    return tuple(model for model in models if model is not None)


def _model(value: object, path: str, issues: list[ConfigIssue]) -> LinkModel | None:
    entry = read_object(value, path, issues)
    if entry is None:
        return None
    issues.extend(unknown_key_issues(entry, _MODEL_KEYS, path))
    model_type = entry.get("type", "cli")
    if model_type != "cli":
        issues.append(ConfigIssue(f"{path}.type", f"unsupported model type {model_type!r}"))
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        issues.append(ConfigIssue(f"{path}.command", "must be a non-empty string"))
        command = ""
    args = _args(entry.get("args", []), f"{path}.args", issues)
    timeout = None
    if "timeoutSeconds" in entry:
        timeout = read_number(entry["timeoutSeconds"], f"{path}.timeoutSeconds", 1, issues)
    return LinkModel(command.strip(), args, timeout)


def _args(value: object, path: str, issues: list[ConfigIssue]) -> tuple[str, ...]:
    if not isinstance(value, list):
        issues.append(ConfigIssue(path, "must be a list of strings"))
        return ()
    for index, arg in enumerate(value):
        if not isinstance(arg, str):
            issues.append(ConfigIssue(f"{path}[{index}]", "must be a string"))
            continue
        for error in find_template_errors(arg):
            issues.append(ConfigIssue(f"{path}[{index}]", f"malformed template: {error}"))
    return tuple(arg for arg in value if isinstance(arg, str))


def _parse_web_fetch(value: object, path: str, issues: list[ConfigIssue]) -> WebFetchConfig:
    block = read_object(value, path, issues)
    if block is None:
        return WebFetchConfig()
    issues.extend(unknown_key_issues(block, _WEB_FETCH_KEYS, path))
    fields: dict[str, Any] = {}
    for key, (name, minimum) in _WEB_FETCH_INTS.items():
        if key in block:
            fields[name] = read_int(block[key], f"{path}.{key}", minimum, issues)
    if "cacheTtlMinutes" in block:
        fields["cache_ttl_minutes"] = read_number(
            block["cacheTtlMinutes"], f"{path}.cacheTtlMinutes", 0, issues
        )
    if "userAgent" in block:
        agent = block["userAgent"]
        if isinstance(agent, str) and agent.strip():
            fields["user_agent"] = agent
        else:
            issues.append(ConfigIssue(f"{path}.userAgent", "must be a non-empty string"))
    if "ssrfPolicy" in block:
        fields["ssrf_policy"] = _ssrf_policy(block["ssrfPolicy"], f"{path}.ssrfPolicy", issues)
    return WebFetchConfig(**{name: value for name, value in fields.items() if value is not None})


def _ssrf_policy(value: object, path: str, issues: list[ConfigIssue]) -> SsrfPolicy | None:
    raw = read_object(value, path, issues)
    if raw is None:
        return None
    try:
        return SsrfPolicy.from_dict(raw)
    except ValueError as error:
        issues.append(ConfigIssue(path, str(error)))
        return None


def _parse_agents(value: object, issues: list[ConfigIssue]) -> tuple[AgentConfig, ...]:
    agents = read_object(value, "agents", issues)
    if agents is None:
        return ()
    issues.extend(unknown_key_issues(agents, frozenset({"list"}), "agents"))
    entries = agents.get("list", [])
    if not isinstance(entries, list):
        issues.append(ConfigIssue("agents.list", "must be a list"))
        return ()
    parsed: list[AgentConfig] = []
    for index, entry in enumerate(entries):
        agent = _parse_agent(entry, f"agents.list[{index}]", issues)
        if agent is not None and any(known.id == agent.id for known in parsed):
            issues.append(
                ConfigIssue(f"agents.list[{index}].id", f'duplicate agent id "{agent.id}"')
            )
        elif agent is not None:
            parsed.append(agent)
    return tuple(parsed)


def _parse_agent(value: object, path: str, issues: list[ConfigIssue]) -> AgentConfig | None:
    entry = read_object(value, path, issues)
    if entry is None:
        return None
    issues.extend(unknown_key_issues(entry, frozenset({"id", "tools"}), path))
    agent_id = entry.get("id")
    if not isinstance(agent_id, str) or not agent_id.strip():
        issues.append(ConfigIssue(f"{path}.id", "must be a non-empty string"))
        return None
    tools = read_object(entry.get("tools", {}), f"{path}.tools", issues)
    if tools is None:
        return AgentConfig(agent_id)
    issues.extend(unknown_key_issues(tools, _AGENT_TOOLS_KEYS, f"{path}.tools"))
    links = None
    if "links" in tools:
        links = LinksOverride(**_parse_links_block(tools["links"], f"{path}.tools.links", issues))
    return AgentConfig(
        id=agent_id,
        links=links,
        media=_opaque_object(tools, "media", f"{path}.tools", issues),
        tool_policy=_tool_policy(tools, f"{path}.tools", issues),
    )


def _opaque_object(
    block: Mapping[str, object], key: str, path: str, issues: list[ConfigIssue]
) -> dict[str, Any] | None:
    if key not in block:
        return None
    value = read_object(block[key], f"{path}.{key}", issues)
    if value is None:
        return None
    found = json_issues(value, f"{path}.{key}")
    if not found:
        # The media block stays a plain dict here; its own parser validates it.
        found = parse_media_config(value, f"{path}.{key}")[1]
    issues.extend(found)
    return None if found else dict(json_copy(value))


def _tool_policy(
    block: Mapping[str, object], path: str, issues: list[ConfigIssue]
) -> dict[str, Any]:
    policy: dict[str, Any] = {}
    for key in TOOL_POLICY_KEYS:
        if key in block:
            found = json_issues(block[key], f"{path}.{key}")
            issues.extend(found)
            if not found:
                policy[key] = json_copy(block[key])
    # Kept as a plain dict; the policy engine's own parser decides what is valid.
    errors = parse_tool_policy(policy, path)[1]
    issues.extend(ConfigIssue(error_path, message) for error_path, message in errors)
    return policy


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
    for key, name in _LINKS_FIELDS.items():
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
        key: getattr(web_fetch, name) for key, (name, _minimum) in _WEB_FETCH_INTS.items()
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
        for name in _LINKS_FIELDS.values()
        if (value := getattr(agent.links, name)) is not None
    }
    return dataclasses.replace(config.links, **present)


def effective_media_config(config: Config, agent_id: str | None) -> dict[str, Any] | None:
    """Same idea for the still-opaque ``tools.media`` block."""
    agent = _find_agent(config, agent_id)
    if agent is None or agent.media is None:
        return config.media
    return merge_override(config.media or {}, agent.media)
