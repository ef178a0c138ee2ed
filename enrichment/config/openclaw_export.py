"""The stored config written for a chosen OpenClaw: the current shape (default) or the legacy one.

The Control UI stores its config in the shape of our spec (SPEC §3, the *legacy* shape:
``agents.list``, ``tools.media.<capability>.models``, per-agent ``tools.links``). OpenClaw
2026.9 reads another one, and its ``openclaw config validate`` refuses the legacy keys. So an
export names its target:

- ``current``: OpenClaw 2026.9's shape. Agents become ``agents.entries`` keyed by id (with
  ``agents.ownership: "explicit"`` when there are several), capability model lists become
  entries of the one ``tools.media.models`` list with ``capabilities: [<capability>]`` (put
  first, so each capability still tries its own models before the shared ones), and
  ``ssrfPolicy.allowPrivateNetwork`` is written as OpenClaw's ``dangerouslyAllowPrivateNetwork``.
  What has no home there is left out and named in a note, never dropped silently::

      >>> result = export_openclaw(
      ...     {"tools": {"links": {"concurrency": 2, "models": []}},
      ...      "agents": {"list": [{"id": "a", "tools": {"links": {"enabled": False}}}]}}
      ... )
      >>> result.document
      {'tools': {'links': {'models': []}}, 'agents': {'entries': {'a': {}}}}
      >>> for note in result.notes: print(note)
      tools.links.concurrency: OpenClaw 2026.9 has no such setting (it reads a message's links one after another); not exported
      agents.list[0].tools.links: OpenClaw 2026.9 has no per-agent link settings (agents.entries.a.tools holds only the tool policy); not exported, so this agent follows the global tools.links there

- ``legacy``: the stored document as it is (the shape the Control UI and OpenClaw before
  2026.9 read); every setting has a home there.

Pure: no Django; ``config_store.config_document`` gives the stored document.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from enrichment.pipeline.config.scope import normalize_chat_type

Target = Literal["current", "legacy"]
TARGETS: tuple[Target, ...] = ("current", "legacy")
DEFAULT_TARGET: Target = "current"
OPENCLAW_VERSION = "2026.9.6"
CAPABILITIES = ("image", "audio", "video")
# OpenClaw's schema for the keys of ``agents.entries`` (``openclaw config schema``).
AGENT_ID = re.compile(r"^[a-z0-9_][a-z0-9_-]{0,63}$")
BUILTIN_LINK_COMMAND = "link-understand"

Note = str


@dataclass(frozen=True)
class OpenClawExport:
    target: Target
    document: dict[str, Any]
    notes: list[Note] = field(default_factory=list)


class UnknownTarget(ValueError):
    """A target other than ``current`` or ``legacy``."""


def parse_target(value: str) -> Target:
    for target in TARGETS:
        if value == target:
            return target
    raise UnknownTarget(f'unknown target "{value}": use one of {", ".join(TARGETS)}')


def export_openclaw(document: Mapping[str, Any], target: str = DEFAULT_TARGET) -> OpenClawExport:
    """The stored (spec-shaped, already valid) ``document`` written for ``target``."""
    chosen = parse_target(target)
    if chosen == "legacy":
        return OpenClawExport(chosen, copy.deepcopy(dict(document)), legacy_notes(document))
    notes: list[Note] = []
    result: dict[str, Any] = {}
    if "tools" in document:
        result["tools"] = _tools(document["tools"], notes)
    entries = _agent_entries((document.get("agents") or {}).get("list") or [], notes)
    if entries:
        # OpenClaw refuses a roster of several agents without an owner marker; the Control UI
        # has no "default agent", so the roster is written as explicitly owned.
        agents: dict[str, Any] = {"ownership": "explicit"} if len(entries) > 1 else {}
        agents["entries"] = entries
        result["agents"] = agents
    return OpenClawExport(chosen, result, notes)


LEGACY_REFUSED = "OpenClaw 2026.9 refuses this key (export with the current target for it)"


def legacy_notes(document: Mapping[str, Any]) -> list[Note]:
    """Every setting has a home in the legacy shape; these notes name the keys of it that
    OpenClaw 2026.9's ``config validate`` refuses, for whoever takes the file there."""
    notes: list[Note] = []
    tools = document.get("tools") or {}
    blocks = [("tools", tools)] + [
        (f"agents.list[{index}].tools", agent.get("tools") or {})
        for index, agent in enumerate((document.get("agents") or {}).get("list") or [])
    ]
    for path, block in blocks:
        if path != "tools":
            notes += [
                f"{path}.{key}: {LEGACY_REFUSED}" for key in ("links", "media") if key in block
            ]
        if "concurrency" in (block.get("links") or {}):
            notes.append(f"{path}.links.concurrency: {LEGACY_REFUSED}")
    media = tools.get("media") or {}
    notes += [
        f"tools.media.{capability}.models: {LEGACY_REFUSED}"
        for capability in CAPABILITIES
        if "models" in (media.get(capability) or {})
    ]
    policy = ((tools.get("web") or {}).get("fetch") or {}).get("ssrfPolicy") or {}
    if "allowPrivateNetwork" in policy:
        notes.append(
            "tools.web.fetch.ssrfPolicy.allowPrivateNetwork: OpenClaw 2026.9 refuses this name "
            "(its name is dangerouslyAllowPrivateNetwork)"
        )
    if len((document.get("agents") or {}).get("list") or []) > 1:
        notes.append(
            "agents.list: OpenClaw 2026.9 reads it as agents.entries and refuses several agents "
            'without agents.ownership "explicit", which this shape has no key for'
        )
    return notes


# --- tools ----------------------------------------------------------------------------------


def _tools(tools: Mapping[str, Any], notes: list[Note]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in tools.items():
        if key == "links":
            result[key] = _links(value, "tools.links", notes)
        elif key == "media":
            result[key] = _media(value, notes)
        elif key == "web":
            result[key] = _web(value)
        else:  # the tool policy keys: the same in both shapes
            result[key] = copy.deepcopy(value)
    return result


def _links(links: Mapping[str, Any], path: str, notes: list[Note]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in links.items():
        if key == "concurrency":
            notes.append(
                f"{path}.concurrency: OpenClaw 2026.9 has no such setting (it reads a message's "
                "links one after another); not exported"
            )
        elif key == "timeoutSeconds":
            result[key] = _whole_seconds(value, f"{path}.timeoutSeconds", notes)
        elif key == "models":
            result[key] = [
                _link_model(model, f"{path}.models[{index}]", notes)
                for index, model in enumerate(value)
            ]
        elif key == "scope":
            result[key] = _scope(value, f"{path}.scope", notes)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _scope(scope: Mapping[str, Any], path: str, notes: list[Note]) -> dict[str, Any]:
    """OpenClaw's schema takes only ``direct``, ``group`` and ``channel``; the Control UI also
    reads ``dm`` and any case as the same chat type, written here under OpenClaw's name."""
    result = copy.deepcopy(dict(scope))
    for index, rule in enumerate(result.get("rules") or []):
        match = rule.get("match") or {}
        written = match.get("chatType")
        if isinstance(written, str):
            chat_type = normalize_chat_type(written)
            if chat_type is not None and chat_type != written:
                match["chatType"] = chat_type
                notes.append(
                    f'{path}.rules[{index}].match.chatType: "{written}" written as '
                    f'"{chat_type}", the same chat type under OpenClaw\'s name'
                )
    return result


def _link_model(model: Mapping[str, Any], path: str, notes: list[Note]) -> dict[str, Any]:
    result = copy.deepcopy(dict(model))
    if "timeoutSeconds" in result:
        result["timeoutSeconds"] = _whole_seconds(
            result["timeoutSeconds"], f"{path}.timeoutSeconds", notes
        )
    result["args"] = _link_args(str(model.get("command", "")), list(model.get("args", [])), path,
                                notes)  # fmt: skip
    return result


def names_link_url(arg: str) -> bool:
    """OpenClaw 2026.9 removes every link-model argument that names either variable."""
    return "LinkUrl" in arg or "LinkFinalUrl" in arg


def _link_args(command: str, args: list[str], path: str, notes: list[Note]) -> list[str]:
    """OpenClaw 2026.9 drops each argument naming LinkUrl and gives the page on stdin. The
    built-in's ``--url {{LinkUrl}}`` pair is written as the one argument ``--url={{LinkUrl}}``
    (the same request to our runner), so OpenClaw drops it whole and link-understand reads the
    page from stdin instead of failing on a ``--url`` left without its value."""
    builtin = command.rsplit("/", 1)[-1] == BUILTIN_LINK_COMMAND
    result: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        following = args[index + 1] if index + 1 < len(args) else None
        is_flag = arg.startswith("-") and "=" not in arg and not names_link_url(arg)
        if is_flag and following is not None and names_link_url(following):
            if builtin:
                result.append(f"{arg}={following}")
                notes.append(
                    f'{path}.args: "{arg}", "{following}" written as "{arg}={following}": '
                    "OpenClaw 2026.9 removes every argument naming LinkUrl and passes the page "
                    "on stdin, which link-understand then reads"
                )
                index += 2
                continue
            notes.append(
                f'{path}.args[{index + 1}]: OpenClaw 2026.9 removes "{following}" and passes the '
                f'page on stdin, so "{arg}" reaches {command} without its value'
            )
        result.append(arg)
        index += 1
    return result


def _whole_seconds(value: Any, path: str, notes: list[Note]) -> Any:
    """OpenClaw takes whole seconds; a fraction is rounded up (a shorter deadline could cut
    a run the Control UI lets finish) and said so."""
    if isinstance(value, float) and not value.is_integer():
        whole = math.ceil(value)
        notes.append(f"{path}: OpenClaw 2026.9 takes whole seconds; {value:g} written as {whole}")
        return whole
    return int(value) if isinstance(value, float) else value


# --- media ----------------------------------------------------------------------------------


def _media(media: Mapping[str, Any], notes: list[Note]) -> dict[str, Any]:
    moved: list[dict[str, Any]] = []
    for capability in CAPABILITIES:
        block = media.get(capability)
        if isinstance(block, Mapping) and block.get("models"):
            moved += _capability_models(capability, block["models"], notes)
    result: dict[str, Any] = {}
    if moved:
        result["models"] = []
    for key, value in media.items():
        path = f"tools.media.{key}"
        if key == "models":
            result["models"] = [
                _media_entry(entry, f"{path}[{index}]", notes) for index, entry in enumerate(value)
            ]
        elif key in CAPABILITIES:
            block = _media_settings({k: v for k, v in value.items() if k != "models"}, path, notes)
            if block:
                result[key] = block
        else:
            result[key] = copy.deepcopy(value)
    if moved:
        result["models"] = moved + result["models"]
    return result


def _capability_models(
    capability: str, entries: list[Mapping[str, Any]], notes: list[Note]
) -> list[dict[str, Any]]:
    path = f"tools.media.{capability}.models"
    moved = []
    for index, entry in enumerate(entries):
        listed = entry.get("capabilities")
        if listed and capability not in listed:
            notes.append(
                f'{path}[{index}]: lists capabilities {listed} without "{capability}", so it '
                "never runs; not exported"
            )
            continue
        converted = _media_entry(entry, f"{path}[{index}]", notes)
        converted["capabilities"] = [capability]
        moved.append(converted)
    if moved:
        notes.append(
            f'{path}: written as tools.media.models entries with capabilities ["{capability}"] '
            "(OpenClaw 2026.9 keeps one model list), ahead of the shared ones as before"
        )
    return moved


def _media_entry(entry: Mapping[str, Any], path: str, notes: list[Note]) -> dict[str, Any]:
    result = _media_settings(entry, path, notes)
    is_cli = entry.get("type") == "cli" or (entry.get("type") is None and entry.get("command"))
    if is_cli and not entry.get("args"):
        notes.append(
            path + ".args: OpenClaw 2026.9 refuses to run a media CLI without args (it gives "
            "the file only through {{MediaPath}}, never on stdin)"
        )
    return result


def _media_settings(block: Mapping[str, Any], path: str, notes: list[Note]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in block.items():
        if key == "timeoutSeconds":
            result[key] = _whole_seconds(value, f"{path}.timeoutSeconds", notes)
        elif key == "scope" and isinstance(value, Mapping):
            result[key] = _scope(value, f"{path}.scope", notes)
        elif key == "maxChars" and value == 0:
            notes.append(
                f"{path}.maxChars: 0 (no trimming) has no equivalent in OpenClaw 2026.9, which "
                "takes a whole number of at least 1; not exported, so its default applies there"
            )
        else:
            result[key] = copy.deepcopy(value)
    return result


# --- web fetch --------------------------------------------------------------------------------


def _web(web: Mapping[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(dict(web))
    policy = (result.get("fetch") or {}).get("ssrfPolicy")
    if isinstance(policy, dict) and "allowPrivateNetwork" in policy:
        # The same switch under OpenClaw's name; the key order is kept.
        renamed = {
            ("dangerouslyAllowPrivateNetwork" if key == "allowPrivateNetwork" else key): value
            for key, value in policy.items()
        }
        result["fetch"]["ssrfPolicy"] = renamed
    return result


# --- agents -------------------------------------------------------------------------------------


def _agent_entries(agents: list[Mapping[str, Any]], notes: list[Note]) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    for index, agent in enumerate(agents):
        agent_id = str(agent.get("id", ""))
        path = f"agents.list[{index}]"
        if not AGENT_ID.match(agent_id):
            notes.append(
                f'{path}: the id "{agent_id}" is not an OpenClaw 2026.9 agent id (lower-case '
                "letters, digits, _ and -, at most 64); this agent is not exported"
            )
            continue
        tools: dict[str, Any] = {}
        for key, value in (agent.get("tools") or {}).items():
            if key in ("links", "media"):
                block = "link" if key == "links" else "media"
                notes.append(
                    f"{path}.tools.{key}: OpenClaw 2026.9 has no per-agent {block} settings "
                    f"(agents.entries.{agent_id}.tools holds only the tool policy); not "
                    f"exported, so this agent follows the global tools.{key} there"
                )
            else:
                tools[key] = copy.deepcopy(value)
        entries[agent_id] = {"tools": tools} if tools else {}
    return entries
