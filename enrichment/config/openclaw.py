"""An OpenClaw config file (JSON5) reduced to the part the Control UI stores, and back.

OpenClaw keeps everything in one file (gateway, channels, models, agents, tools …). The
Control UI stores only the enrichment-related blocks (SPEC §3); the rest is dropped on
import with one note per dropped section, so an operator can see what was left behind.
Both shapes are read: our spec's (``agents.list``, ``tools.media.<capability>.models``)
and OpenClaw 2026.9's (``agents.entries`` keyed by id, ``tools.media.models`` with
``capabilities``; see ``openclaw_current``). Export to either is ``openclaw_export``::

    >>> document, notes = openclaw_to_config(
    ...     {"gateway": {"port": 1}, "tools": {"exec": {}, "links": {"maxLinks": 2}}}
    ... )
    >>> document
    {'tools': {'links': {'maxLinks': 2}}}
    >>> notes
    ['gateway: not a Control UI setting, ignored', 'tools.exec: not a Control UI setting, ignored']

Validation is not done here: the document goes through ``services.config_replace`` (or
``pipeline.config_parser.parse_config``), which names every path at fault.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import json5

from enrichment.config.openclaw_current import (
    AGENT_ENTRY_NOT_MODELLED,
    AGENTS_NOT_MODELLED,
    agents_from_entries,
    fetch_from_openclaw,
    ignored,
    links_from_openclaw,
    media_from_openclaw,
    not_modelled,
)
from enrichment.pipeline.config.model import TOOL_POLICY_KEYS

TOOLS_TAKEN = ("links", "media", *TOOL_POLICY_KEYS)
AGENT_KEYS_TAKEN = ("id", "tools")

Note = str


class OpenClawFileError(ValueError):
    """The file is not a readable JSON5 object."""


def openclaw_load(text: str) -> dict[str, Any]:
    """Parse an OpenClaw config file (JSON5: comments, trailing commas, unquoted keys)."""
    try:
        document = json5.loads(text)
    except ValueError as exc:
        raise OpenClawFileError(f"not valid JSON5: {exc}") from None
    if not isinstance(document, dict):
        raise OpenClawFileError(f"the top level must be an object, got {type(document).__name__}")
    return document


def openclaw_to_config(doc: Mapping[str, Any]) -> tuple[dict[str, Any], list[Note]]:
    """The Control UI config document inside an OpenClaw config, and what was left out."""
    notes: list[Note] = []
    document: dict[str, Any] = {}
    for key in doc:
        if key not in ("tools", "agents"):
            notes.append(_ignored(key))
    if "tools" in doc:
        tools = _tools_block(doc["tools"], "tools", notes, with_web=True)
        if tools is not None:
            document["tools"] = tools
    if "agents" in doc:
        agents = _agents_block(doc["agents"], notes)
        if agents is not None:
            document["agents"] = agents
    return document, notes


def config_to_openclaw(document: Mapping[str, Any]) -> str:
    """The stored config as an OpenClaw-shaped JSON file (valid JSON5 too)."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


_ignored = ignored


def _tools_block(value: Any, path: str, notes: list[Note], *, with_web: bool) -> Any:
    if not isinstance(value, Mapping):
        return value  # let validation name the wrong type
    taken: dict[str, Any] = {}
    for key, item in value.items():
        if key == "links":
            taken[key] = links_from_openclaw(item, f"{path}.links", notes)
        elif key == "media":
            taken[key] = media_from_openclaw(item, f"{path}.media", notes)
        elif key in TOOLS_TAKEN:
            taken[key] = item
        elif key == "web" and with_web:
            web = _web_block(item, f"{path}.web", notes)
            if web is not None:
                taken["web"] = web
        else:
            notes.append(_ignored(f"{path}.{key}"))
    return taken


def _web_block(value: Any, path: str, notes: list[Note]) -> Any:
    if not isinstance(value, Mapping):
        return value
    for key in value:
        if key != "fetch":
            notes.append(_ignored(f"{path}.{key}"))
    if "fetch" not in value:
        return None
    return {"fetch": fetch_from_openclaw(value["fetch"], f"{path}.fetch", notes)}


def _agents_block(value: Any, notes: list[Note]) -> Any:
    """``agents.list`` (legacy) and ``agents.entries`` (2026.9) both become ``agents.list``,
    the listed agents first; an id in both is reported by validation as a duplicate."""
    if not isinstance(value, Mapping):
        return value
    for key in value:
        if key not in ("list", "entries"):
            notes.append(not_modelled(f"agents.{key}", AGENTS_NOT_MODELLED.get(key)))
    if "list" not in value and "entries" not in value:
        return None
    listed = value.get("list", [])
    if not isinstance(listed, list):
        return {"list": listed}
    agents = [_agent(entry, f"agents.list[{i}]", notes) for i, entry in enumerate(listed)]
    if "entries" in value:
        entries = agents_from_entries(value["entries"], notes, _agent)
        if not isinstance(entries, list):
            return {"list": entries}
        agents += entries
    return {"list": agents}


def _agent(value: Any, path: str, notes: list[Note]) -> Any:
    if not isinstance(value, Mapping):
        return value
    agent: dict[str, Any] = {}
    for key, item in value.items():
        if key == "tools":
            agent["tools"] = _tools_block(item, f"{path}.tools", notes, with_web=False)
        elif key in AGENT_KEYS_TAKEN:
            agent[key] = item
        elif key == "default":
            notes.append(not_modelled(f"{path}.{key}", AGENT_ENTRY_NOT_MODELLED[key]))
        else:
            notes.append(_ignored(f"{path}.{key}"))
    if agent.get("tools") == {}:
        del agent["tools"]
    return agent
