"""Which tools an agent run may use under a config: the glue between the stored (or a given)
OpenClaw document and the pure policy engine (``enrichment.pipeline.policy.resolve``).

``tools_resolve`` answers ``POST /api/tools/resolve``; ``tool_access_report`` feeds the
"Tool access" page with the same resolution plus grouping for display.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from common.errors import InvalidInput
from enrichment.config.cache import config_load
from enrichment.pipeline.config.model import Config, ConfigError
from enrichment.pipeline.config.parser import parse_config
from enrichment.pipeline.policy.inventory import ToolInventory, tool_groups
from enrichment.pipeline.policy.resolve import (
    Removal,
    ToolPolicyConfig,
    ToolResolution,
    parse_tool_policy,
    resolve_tools,
)

# Resolution cost grows with (policy entries x tools), so both sides are bounded: a
# hostile 5 MB document of globs would otherwise keep a worker busy for minutes.
MAX_POLICY_ENTRIES = 1000
POLICY_LIST_KEYS = ("allow", "alsoAllow", "deny")
PLUGIN_GROUP_PREFIX = "plugin:"
OTHER_GROUP = "other"


def tools_resolve(
    *,
    config_document: Mapping[str, Any] | None = None,
    agent_id: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    available: Sequence[str] | None = None,
    plugin_tools: Mapping[str, Sequence[str]] | None = None,
) -> ToolResolution:
    """Resolve the allowed tools under ``config_document`` (default: the stored config).

    A given document is validated as a whole; its problems come back as one 422 listing
    every path at fault, e.g. ``tools.profile: unknown profile "admin"``.
    """
    config = stored_config() if config_document is None else _parsed(config_document)
    global_policy, agent_policies = tool_policies(config)
    return resolve_tools(
        global_policy,
        agent_policies,
        agent_id=agent_id,
        provider=provider,
        model=model,
        available=available,
        plugin_tools=plugin_tools,
    )


def stored_config() -> Config:
    """The stored config, parsed (4 queries however many agents and rules it holds)."""
    config, _document = config_load()
    return config


def _parsed(document: Mapping[str, Any]) -> Config:
    try:
        return parse_config(document)
    except ConfigError as exc:
        raise InvalidInput("Invalid configuration.", [str(issue) for issue in exc.errors]) from None


def tool_policies(config: Config) -> tuple[ToolPolicyConfig, dict[str, ToolPolicyConfig]]:
    """The global policy and agent id -> policy, from a config ``parse_config`` accepted."""
    _check_policy_size(config)
    errors: list[str] = []
    global_policy, global_errors = parse_tool_policy(config.tool_policy, "tools")
    errors.extend(f"{path}: {message}" for path, message in global_errors)
    agents: dict[str, ToolPolicyConfig] = {}
    for index, agent in enumerate(config.agents):
        policy, agent_errors = parse_tool_policy(
            agent.tool_policy, f"agents.list[{index}].tools", agent=True
        )
        agents[agent.id] = policy
        errors.extend(f"{path}: {message}" for path, message in agent_errors)
    if errors:  # parse_config runs the same parser, so only rows edited around it get here
        raise InvalidInput("The tool policy is invalid.", errors)
    return global_policy, agents


def _policy_entry_count(policy: Mapping[str, Any]) -> int:
    blocks = [policy, *(policy.get("byProvider") or {}).values()]
    return sum(
        len(block.get(key) or ())
        for block in blocks
        if isinstance(block, Mapping)
        for key in POLICY_LIST_KEYS
    )


def _check_policy_size(config: Config) -> None:
    count = _policy_entry_count(config.tool_policy) + sum(
        _policy_entry_count(agent.tool_policy) for agent in config.agents
    )
    if count > MAX_POLICY_ENTRIES:
        raise InvalidInput(
            "Tool policy too large.",
            [
                f"tools: the allow, alsoAllow and deny lists hold {count} entries in all "
                f"(global, byProvider and agents); the limit is {MAX_POLICY_ENTRIES}"
            ],
        )


# --- the "Tool access" page ---------------------------------------------------------------


@dataclass(frozen=True)
class ToolRow:
    """One tool on the page: allowed, or removed by ``removal.stage`` for ``removal.reason``."""

    name: str
    removal: Removal | None = None


@dataclass(frozen=True)
class ToolGroupRows:
    group: str
    tools: tuple[ToolRow, ...]

    @property
    def allowed_count(self) -> int:
        return sum(1 for tool in self.tools if tool.removal is None)


@dataclass(frozen=True)
class ToolAccessReport:
    agent_id: str | None
    provider: str | None
    model: str | None
    agent_ids: tuple[str, ...]
    configured: bool  # any profile/allow/alsoAllow/deny/byProvider, global or per agent
    resolution: ToolResolution
    groups: tuple[ToolGroupRows, ...]

    @property
    def tool_count(self) -> int:
        return len(self.resolution.allowed) + len(self.resolution.removed)


def tool_access_report(
    *,
    config: Config | None = None,
    agent_id: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    plugin_tools: Mapping[str, Sequence[str]] | None = None,
) -> ToolAccessReport:
    """A config's resolution (default: the stored one) for one agent/provider/model,
    grouped for display."""
    config = stored_config() if config is None else config
    global_policy, agent_policies = tool_policies(config)
    resolution = resolve_tools(
        global_policy,
        agent_policies,
        agent_id=agent_id,
        provider=provider,
        model=model,
        plugin_tools=plugin_tools,
    )
    return ToolAccessReport(
        agent_id=agent_id,
        provider=provider,
        model=model,
        agent_ids=tuple(agent.id for agent in config.agents),
        configured=bool(config.tool_policy) or any(agent.tool_policy for agent in config.agents),
        resolution=resolution,
        groups=group_tools(resolution, plugin_tools=plugin_tools),
    )


def group_tools(
    resolution: ToolResolution,
    *,
    available: Sequence[str] | None = None,
    plugin_tools: Mapping[str, Sequence[str]] | None = None,
) -> tuple[ToolGroupRows, ...]:
    """Sort the tools of a resolution into the first policy group naming each one.

    ``available``/``plugin_tools`` must be what the resolution was computed from. Groups
    keep ``tool_groups()`` order; ``group:openclaw`` comes last there, so it only gets
    the tools no narrower group names (``image``, ``agents_list``). Each plugin gets its
    own ``plugin:<id>`` group and anything else lands in ``other``. Tools keep input order.

    >>> resolution = ToolResolution(("exec", "image", "lobster"), (), ())
    >>> plugins = {"Lobster": ["lobster"]}
    >>> groups = group_tools(resolution, available=["exec", "image"], plugin_tools=plugins)
    >>> [(group.group, [tool.name for tool in group.tools]) for group in groups]
    [('group:runtime', ['exec']), ('group:openclaw', ['image']), ('plugin:lobster', ['lobster'])]
    """
    removals = {removal.tool: removal for removal in resolution.removed}
    member_of: dict[str, str] = {}
    for group, members in tool_groups().items():
        for member in members:
            member_of.setdefault(member, group)
    rows: dict[str, list[ToolRow]] = {group: [] for group in tool_groups()}
    other: list[ToolRow] = []
    for tool in ToolInventory.build(available, plugin_tools).tools:
        row = ToolRow(tool.name, removals.get(tool.name))
        if tool.plugin_id is not None:
            rows.setdefault(PLUGIN_GROUP_PREFIX + tool.plugin_id, []).append(row)
        elif tool.key in member_of:
            rows[member_of[tool.key]].append(row)
        else:
            other.append(row)
    rows[OTHER_GROUP] = other
    return tuple(ToolGroupRows(group, tuple(tools)) for group, tools in rows.items() if tools)
