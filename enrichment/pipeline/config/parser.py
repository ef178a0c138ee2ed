"""Reading the OpenClaw-shaped config document into ``config.model.Config`` values.

``parse_config`` validates the whole document and reports *every* problem at once as a
``ConfigError`` whose ``errors`` name their JSON path, e.g.
``tools.links.scope.rules[2].match.chatType: unknown chat type "room"``. Each section has its
own module (``links``, ``web_fetch``, ``media``, ``policy``, ``agents``), all reading with the
one ``readers.ConfigReader``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from enrichment.pipeline.config.agents import parse_agents
from enrichment.pipeline.config.links import parse_links_block
from enrichment.pipeline.config.media import parse_media_block
from enrichment.pipeline.config.model import TOOL_POLICY_KEYS, Config, ConfigError, LinksConfig
from enrichment.pipeline.config.policy import parse_policy_keys
from enrichment.pipeline.config.readers import ConfigIssue, ConfigReader
from enrichment.pipeline.config.web_fetch import parse_web

TOOLS_KEYS = frozenset({"links", "media", "web", *TOOL_POLICY_KEYS})


def parse_config(doc: Mapping[str, object]) -> Config:
    """Validate and convert a whole config document; raise ``ConfigError`` listing all issues."""
    issues: list[ConfigIssue] = []
    read = ConfigReader(issues)
    config = Config()
    root = read.json_object(doc, "config")
    if root is not None:
        read.mapping(root, "config", frozenset({"tools", "agents"}))
        config = _parse_tools(read, root.get("tools", {}))
        config = dataclasses.replace(config, agents=parse_agents(read, root.get("agents", {})))
    if issues:
        raise ConfigError(issues)
    return config


def _parse_tools(read: ConfigReader, value: object) -> Config:
    tools = read.json_object(value, "tools")
    if tools is None:
        return Config()
    read.mapping(tools, "tools", TOOLS_KEYS)
    return Config(
        links=LinksConfig(**parse_links_block(read, tools.get("links", {}), "tools.links")),
        web_fetch=parse_web(read, tools.get("web", {}), "tools.web"),
        media=parse_media_block(read, tools, "tools"),
        tool_policy=parse_policy_keys(read, tools, "tools"),
    )
