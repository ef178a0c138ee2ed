"""The ``agents.list`` section: per-agent overrides of links, media and tool policy."""

from __future__ import annotations

from enrichment.pipeline.config.links import parse_links_block
from enrichment.pipeline.config.media import parse_media_block
from enrichment.pipeline.config.model import TOOL_POLICY_KEYS, AgentConfig, LinksOverride
from enrichment.pipeline.config.policy import parse_policy_keys
from enrichment.pipeline.config.readers import ConfigReader

AGENT_TOOLS_KEYS = frozenset({"links", "media", *TOOL_POLICY_KEYS})


def parse_agents(read: ConfigReader, value: object) -> tuple[AgentConfig, ...]:
    agents = read.json_object(value, "agents")
    if agents is None:
        return ()
    read.mapping(agents, "agents", frozenset({"list"}))
    entries = agents.get("list", [])
    if not isinstance(entries, list):
        read.fail("agents.list", "must be a list")
        return ()
    parsed: list[AgentConfig] = []
    for index, entry in enumerate(entries):
        agent = _parse_agent(read, entry, f"agents.list[{index}]")
        if agent is not None and any(known.id == agent.id for known in parsed):
            read.fail(f"agents.list[{index}].id", f'duplicate agent id "{agent.id}"')
        elif agent is not None:
            parsed.append(agent)
    return tuple(parsed)


def _parse_agent(read: ConfigReader, value: object, path: str) -> AgentConfig | None:
    entry = read.json_object(value, path)
    if entry is None:
        return None
    read.mapping(entry, path, frozenset({"id", "tools"}))
    agent_id = entry.get("id")
    if not isinstance(agent_id, str) or not agent_id.strip():
        read.fail(f"{path}.id", "must be a non-empty string")
        return None
    tools = read.json_object(entry.get("tools", {}), f"{path}.tools")
    if tools is None:
        return AgentConfig(agent_id)
    read.mapping(tools, f"{path}.tools", AGENT_TOOLS_KEYS)
    links = None
    if "links" in tools:
        links = LinksOverride(**parse_links_block(read, tools["links"], f"{path}.tools.links"))
    return AgentConfig(
        id=agent_id,
        links=links,
        media=parse_media_block(read, tools, f"{path}.tools"),
        tool_policy=parse_policy_keys(read, tools, f"{path}.tools"),
    )
