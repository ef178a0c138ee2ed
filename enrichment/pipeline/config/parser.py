"""Reading the OpenClaw-shaped config document into ``config.Config`` values.

``parse_config`` validates the whole document and reports *every* problem at once as a
``ConfigError`` whose ``errors`` name their JSON path, e.g.
``tools.links.scope.rules[2].match.chatType: unknown chat type "room"``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from enrichment.pipeline.config.media import parse_media_config
from enrichment.pipeline.config.model import (
    LINKS_FIELDS,
    TOOL_POLICY_KEYS,
    WEB_FETCH_INTS,
    AgentConfig,
    Config,
    ConfigError,
    LinkModel,
    LinksConfig,
    LinksOverride,
    WebFetchConfig,
)
from enrichment.pipeline.config.readers import (
    json_copy,
    json_issues,
    read_bool,
    read_int,
    read_number,
    read_object,
)
from enrichment.pipeline.fetch.ssrf import SsrfPolicy
from enrichment.pipeline.policy.resolve import parse_tool_policy
from enrichment.pipeline.scope import ConfigIssue, ScopeConfig, parse_scope, unknown_key_issues
from enrichment.pipeline.templates import find_template_errors

_MODEL_KEYS = frozenset({"type", "command", "args", "timeoutSeconds"})
_WEB_FETCH_KEYS = frozenset({*WEB_FETCH_INTS, "cacheTtlMinutes", "userAgent", "ssrfPolicy"})
_TOOLS_KEYS = frozenset({"links", "media", "web", *TOOL_POLICY_KEYS})
_AGENT_TOOLS_KEYS = frozenset({"links", "media", *TOOL_POLICY_KEYS})


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
    issues.extend(unknown_key_issues(block, frozenset(LINKS_FIELDS), path))
    fields: dict[str, Any] = {}
    for key, raw in block.items():
        if key in LINKS_FIELDS:
            parsed = _links_value(key, raw, f"{path}.{key}", issues)
            if parsed is not None:
                fields[LINKS_FIELDS[key]] = parsed
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
    for key, (name, minimum) in WEB_FETCH_INTS.items():
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
